# tests/interop — the official A2A JS client (@a2a-js/sdk, pinned in package.json) against
# lighttpd + tiny-harness (tests/lib/server.sh). Each file exits 77 when node_modules or
# lighttpd is missing.
TESTS += tests/interop/sdk_jsonrpc.mjs tests/interop/sdk_rest.mjs
EXTRA_DIST += tests/interop/sdk_jsonrpc.mjs tests/interop/sdk_rest.mjs tests/interop/scenario.mjs
# Collaboration through the SDK over both bindings: envelope with participants, /ask and the
# asked participant's reply, completion refused while a /subtask child is open (TASK-4, CH-4,
# CH-5, STATUS-1, ID-4, CTL-4, CTL-5). Also exits 77 without sqlite3.
TESTS += tests/interop/collab.mjs
EXTRA_DIST += tests/interop/collab.mjs
# A2UI over A2A with the same client (UI-1..UI-4, EXT-4): the /confirm Card validated against
# @a2ui/web_core's schemas, web_core's Approve action sent back, refusals, text fallback.
TESTS += tests/interop/a2ui.mjs
EXTRA_DIST += tests/interop/a2ui.mjs
TESTS += tests/interop/sdk_tenant.mjs
EXTRA_DIST += tests/interop/sdk_tenant.mjs
# Shared by the Node tests behind lighttpd (interop, ui, streaming): programs on PATH, server.sh
# start/stop, the SDK client with X-Participant-Id; the server's database, SQLite or
# PostgreSQL (db.mjs).
EXTRA_DIST += tests/lib/interop.mjs tests/lib/db.mjs tests/lib/sse.mjs
# Where the Node tests find their npm modules; a missing one fails under TH_REQUIRE_NODE=1.
EXTRA_DIST += tests/interop/deps.mjs
# SEC-1 with the same client against identity = bearer, both bindings: the card's bearer and
# apiKey schemes, a JWT and an API key (fetchImpl from createAuthenticatingFetchWithRetry) act
# as their participant, HTTP 401 without the header or with a forged token, the extended card.
TESTS += tests/interop/sdk_auth.mjs
EXTRA_DIST += tests/interop/sdk_auth.mjs
# CARD-SIG-1..3 (decision-066): the signed card verified with Node's crypto (ES256 and the
# RFC 7638 kid), its ETag the same from both workers, If-None-Match → 304 on the well-known
# card and on GET /extendedAgentCard.
TESTS += tests/interop/card_sig.mjs
EXTRA_DIST += tests/interop/card_sig.mjs
# STREAM-RESUME-1 (decision-072): a stream the server ends after stream_max_ms (1.5 s here)
# resumed by the same client over both bindings: with Last-Event-ID (its serviceParameters;
# the ids read beside the SDK by its fetchImpl) the events of the gap and then the live ones,
# each once against the events table; without it the Task first, holding the gap's message.
TESTS += tests/interop/stream_resume.mjs
EXTRA_DIST += tests/interop/stream_resume.mjs
