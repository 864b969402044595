#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# exec model test program (CTL-3): never answers in time. Its pid goes to $1 so the
# test can check the backend killed it; the sleep is a grandchild, which must go too.
[ -n "$1" ] && echo $$ >"$1"
sleep 30
echo '{"text":"too late"}'
