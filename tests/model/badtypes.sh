#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# exec model test program: valid JSON of the wrong shape ("text" a number), ignores stdin.
echo '{"text": 42}'
