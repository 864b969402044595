#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# SEC-1 through the real lighttpd (conf/lighttpd.conf, two FastCGI workers) with
# identity = bearer: 401 + WWW-Authenticate without credentials, with a bad token and an
# expired one, on both bindings; 200 with a good HS256 JWT and with an API key, acting as
# the credential's participant (the task's reporter); a revoked key refused on the next
# request; the card's securitySchemes; GetExtendedAgentCard for an authenticated caller.
# TAP output; 77 (skip) when lighttpd, curl, jq or openssl is missing.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
TAP_BODY_WIDTH=600
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_lighttpd
require_tools curl jq openssl

scratch th-auth

b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
# jwt CLAIMS-JSON [SECRET] — an HS256 token.
jwt() {
	local h p s
	h=$(printf '{"alg":"HS256","typ":"JWT"}' | b64url)
	p=$(printf '%s' "$1" | b64url)
	s=$(printf '%s.%s' "$h" "$p" | openssl dgst -sha256 -hmac "${2:-$SECRET}" -binary | b64url)
	printf '%s.%s.%s' "$h" "$p" "$s"
}
raw() {
	local method=$1 url=$2
	shift 2
	REQ_DESC="$method $url $*"
	STATUS=$(curl -s -o "$T/body" -D "$T/headers" -w '%{http_code}' --max-time 30 -X "$method" "$@" "$url")
}
header() { tr -d '\r' <"$T/headers" | grep -i "^$1:" | head -n1 | sed 's/^[^:]*: *//'; }
rest_send() { # TOKEN (may be empty) — SendMessage over HTTP+JSON
	raw POST "${BASE}message:send" -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
		${1:+-H "Authorization: Bearer $1"} --data-binary "$(msg m-$RANDOM hello)"
}

SECRET=0123456789abcdef0123456789abcdef-integration
export TINY_HARNESS_IDENTITY=bearer
export TINY_HARNESS_JWT_SECRET_ENV=TINY_HARNESS_JWT_SECRET
export TINY_HARNESS_JWT_SECRET=$SECRET
export TINY_HARNESS_JWT_AUDIENCE=tiny-harness
BASE=$(sh "$SERVER" start "$T/srv" 2) || bail "lighttpd did not start"
DB=$(th_db_of "$T/srv")
echo "# lighttpd at $BASE (2 workers), identity = bearer"
NOW=$(date +%s)
GOOD=$(jwt "{\"sub\":\"alice\",\"aud\":\"tiny-harness\",\"exp\":$((NOW + 600))}")
EXPIRED=$(jwt "{\"sub\":\"alice\",\"aud\":\"tiny-harness\",\"exp\":$((NOW - 600))}")
FORGED=$(jwt "{\"sub\":\"alice\",\"aud\":\"tiny-harness\",\"exp\":$((NOW + 600))}" not-the-secret-not-the-secret-xx)

rest_send ""
check "SEC-1 no credentials: 401 with WWW-Authenticate: Bearer realm=\"tiny-harness\" (HTTP+JSON)" \
	'[ "$STATUS" = 401 ]' '[ "$(header WWW-Authenticate)" = "Bearer realm=\"tiny-harness\"" ]' \
	'[ "$(jqb .error.status)" = UNAUTHENTICATED ]'
raw POST "$BASE" -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' \
	--data-binary "$(rpc 1 ListTasks '{}')"
check "SEC-1 X-Participant-Id alone counts for nothing: 401 in a JSON-RPC error body (JSON-RPC)" \
	'[ "$STATUS" = 401 ]' '[ "$(jqb .error.code)" = -32600 ]' '[ "$(jqb .id)" = 1 ]' \
	'header WWW-Authenticate | grep -q "^Bearer realm="'
rest_send "$FORGED"
check "SEC-1 a token with a bad signature: 401, error=\"invalid_token\", and the token is not echoed" \
	'[ "$STATUS" = 401 ]' 'header WWW-Authenticate | grep -q "error=\"invalid_token\""' \
	'! grep -qF "${FORGED##*.}" "$T/body"'
rest_send "$EXPIRED"
check "SEC-1 an expired token: 401 saying it expired" \
	'[ "$STATUS" = 401 ]' 'grep -q expired "$T/body"'
rest_send "$GOOD"
TASK=$(jqb .task.id)
check "SEC-1 a good JWT: 200, and its sub (alice) is the task's reporter" \
	'[ "$STATUS" = 200 ]' 'has_task' \
	'[ "$(jq -r "[.task.metadata[\"urn:tiny-harness:participants\"] // .task.metadata.participants // empty] | tostring" "$T/body" | grep -c alice)" -ge 1 ] || grep -q "\"alice\"" "$T/body"'

KEY=$(TINY_HARNESS_DB=$DB "$TH_BIN" keys add bob --name ci 2>/dev/null)
check "SEC-1 keys add prints one th_ key and keys list never shows it" \
	'[ "${#KEY}" = 46 ]' '! TINY_HARNESS_DB=$DB "$TH_BIN" keys list | grep -qF "$KEY"'
raw POST "$BASE" -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -H "Authorization: Bearer $KEY" \
	--data-binary "$(rpc 2 GetTask "{\"id\":\"$TASK\"}")"
check "SEC-1 an API key authenticates as its participant (bob is not on alice's task: not found)" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .error.code)" = -32001 ]'
raw POST "$BASE" -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -H "Authorization: Bearer $GOOD" \
	--data-binary "$(rpc 3 GetTask "{\"id\":\"$TASK\"}")"
check "SEC-1 the JWT's participant reads its own task over JSON-RPC" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .result.id)" = "$TASK" ]'
TINY_HARNESS_DB=$DB "$TH_BIN" keys revoke ci >/dev/null
raw POST "$BASE" -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -H "Authorization: Bearer $KEY" \
	--data-binary "$(rpc 4 ListTasks '{}')"
check "SEC-1 a revoked key is refused on the next request" \
	'[ "$STATUS" = 401 ]' 'grep -q revoked "$T/body"'

raw GET "${BASE}.well-known/agent-card.json"
check "SEC-1 the card declares the bearer JWT and API key schemes and the extended card" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .securitySchemes.bearer.httpAuthSecurityScheme.bearerFormat)" = JWT ]' \
	'[ "$(jqb .securitySchemes.apiKey.httpAuthSecurityScheme.scheme)" = Bearer ]' \
	'[ "$(jqb .securityRequirements | jq length)" = 2 ]' '[ "$(jqb .capabilities.extendedAgentCard)" = true ]'
raw GET "${BASE}extendedAgentCard" -H 'A2A-Version: 1.0' -H "Authorization: Bearer $GOOD"
check "SEC-1 GET /extendedAgentCard serves the card to an authenticated caller" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .name)" = tiny-harness ]'
raw GET "${BASE}extendedAgentCard" -H 'A2A-Version: 1.0'
check "SEC-1 GET /extendedAgentCard without credentials: 401" '[ "$STATUS" = 401 ]'

tap_done
