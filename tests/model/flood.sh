#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# exec model test program: prints without end (more than the 1 MiB reply cap), never
# reading its stdin.
yes '{"text":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}'
