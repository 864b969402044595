#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# exec model test program: a tool call whose arguments are a string, not an object.
cat >/dev/null
echo '{"tool_calls":[{"name":"create_plan","arguments":"{\"steps\":[]}"}]}'
