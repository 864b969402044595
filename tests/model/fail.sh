#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# exec model test program: complains on stderr and exits 3.
cat >/dev/null
echo 'model exploded: no GPU' >&2
echo 'second line' >&2
exit 3
