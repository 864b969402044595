#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# CARD-SIG-3, CARD-SIG-4 (decision-066) through the real lighttpd (conf/lighttpd.conf, two
# FastCGI workers) with curl:
#   - a signed card (card_signing_key, Ed25519 here: RS256/ES256 are in the unit and
#     interop tests): If-None-Match with its ETag → 304 and no body, from either worker;
#     HEAD gives the same ETag; a stale tag gets the card;
#   - a key file that cannot be used (missing, then a public key): the workers start and
#     serve everything else, the card answers 500 with an error that names no path, and
#     the error log (the workers' stderr) names the file and the trouble.
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

scratch th-cardsig

raw() {
	local method=$1 url=$2
	shift 2
	REQ_DESC="$method $url $*"
	rm -f "$T/body" # curl writes no file for a response without a body (304)
	STATUS=$(curl -s -o "$T/body" -D "$T/headers" -w '%{http_code}' --max-time 30 -X "$method" "$@" "$url")
}
header() { tr -d '\r' <"$T/headers" | grep -i "^$1:" | head -n1 | sed 's/^[^:]*: *//'; }
CARD=.well-known/agent-card.json

# ------------------------------------------------------------------ a good key
openssl genpkey -algorithm ED25519 -out "$T/ed.pem" 2>/dev/null || bail "openssl cannot make an Ed25519 key"
export TINY_HARNESS_CARD_SIGNING_KEY=$T/ed.pem
BASE=$(sh "$SERVER" start "$T/srv" 2) || bail "lighttpd did not start"
echo "# lighttpd at $BASE (2 workers), card_signing_key = $T/ed.pem"

raw GET "$BASE$CARD"
ETAG=$(header ETag)
PROT=$(jq -r '.signatures[0].protected // empty' "$T/body")
check "CARD-SIG-1 the card is signed with EdDSA (protected header alg EdDSA, typ JOSE, kid)" \
	'[ "$STATUS" = 200 ]' '[ -n "$PROT" ]' \
	'[ "$(printf %s "$PROT" | tr "_-" "/+" | base64 -d 2>/dev/null | jq -r ".alg + \" \" + .typ + \" \" + (.kid|length|tostring)")" = "EdDSA JOSE 43" ]'
check "CARD-SIG-3 the signed card has a weak ETag and Cache-Control" \
	'[[ "$ETAG" =~ ^W/\"[0-9a-f]{16}\"$ ]]' '[ -n "$(header Cache-Control)" ]'
same=1
for i in 1 2 3 4 5 6; do
	raw GET "$BASE$CARD" -H "If-None-Match: $ETAG"
	[ "$STATUS" = 304 ] && [ ! -s "$T/body" ] && [ "$(header ETag)" = "$ETAG" ] || same=0
done
check "CARD-SIG-3 If-None-Match with the ETag gets 304, no body, six times over both workers" '[ "$same" = 1 ]'
raw HEAD "$BASE$CARD" -I
check "CARD-SIG-3 HEAD gives the same ETag" '[ "$STATUS" = 200 ]' '[ "$(header ETag)" = "$ETAG" ]'
raw GET "$BASE$CARD" -H 'If-None-Match: W/"0123456789abcdef"'
check "CARD-SIG-3 a stale tag gets the whole card" '[ "$STATUS" = 200 ]' '[ -n "$(jq -r .signatures[0].signature "$T/body")" ]'
sh "$SERVER" stop "$T/srv"

# ------------------------------------------------------------------ unusable keys
bad_key() { # LABEL PATH WORDS
	BAD_DIR=$T/bad-$1 BAD_PATH=$2 BAD_WORDS=$3 # read by check's conditions
	export TINY_HARNESS_CARD_SIGNING_KEY=$2
	BASE=$(TH_SERVER_EXPECT=500 sh "$SERVER" start "$T/bad-$1" 2) || bail "lighttpd did not start with $1"
	http POST / "$(rpc 1 SendMessage "$(msg "m-$1" hello)")"
	local sent=$STATUS
	raw GET "$BASE$CARD"
	check "CARD-SIG-4 $1 key file: the workers start and serve SendMessage; the card is 500 naming no path; the log names the file" \
		'[ "$sent" = 200 ]' '[ "$STATUS" = 500 ]' \
		'grep -q "signing key cannot be used" "$T/body"' '! grep -q "$T" "$T/body"' \
		'cat "$BAD_DIR/error.log" "$BAD_DIR/lighttpd.out" | grep -q "card_signing_key $BAD_PATH: $BAD_WORDS"'
	sh "$SERVER" stop "$T/bad-$1"
}
bad_key missing "$T/nope.pem" "no such file"
openssl pkey -in "$T/ed.pem" -pubout -out "$T/pub.pem" 2>/dev/null
bad_key public "$T/pub.pem" "holds a public key"

tap_done
