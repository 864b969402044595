#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# exec model test program: prints something that is not JSON and exits 0.
cat >/dev/null
echo 'this is {not json'
