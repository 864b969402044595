# tests/interop — the official A2A JS client (@a2a-js/sdk, pinned in package.json) against
# lighttpd + tiny-harness (tests/lib/server.sh). Each file exits 77 when node_modules or
# lighttpd is missing.
TESTS += tests/interop/sdk_jsonrpc.mjs tests/interop/sdk_rest.mjs
EXTRA_DIST += tests/interop/sdk_jsonrpc.mjs tests/interop/sdk_rest.mjs tests/interop/scenario.mjs
