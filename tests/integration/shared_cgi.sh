#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: shared hosting with plain CGI (PKG-3). A real Apache, configured as a
# hosting company would (tests/lib/apache.sh start htaccess-cgi: a document root with only
# the AllowOverride the recipe asks for, nothing of ours in the server configuration), and
# a user directory holding only what a user uploads: conf/htaccess-cgi.example as
# .htaccess, the program copied as tiny-harness.cgi and its conf/tiny-harness.conf, the
# database outside the document root. Through it: the card, SendMessage, a follow-up, GetTask, the body limit;
# the program, its configuration and .htaccess are never served as files; the database is
# where the configuration says and belongs to the user the server runs the program as.
# The .htaccess runs as shipped, with its login on (SEC-1): 401 without one, and the
# login, not X-Participant-Id, is the participant.
# The same upload on a host with mod_cgi (prefork) instead of mod_cgid serves a task; on a
# host with neither module it answers 503 naming them, and without mod_rewrite either it
# answers an error; never the binary.
#
# TAP output; 77 (skip) when apache2, mod_cgid/mod_cgi, mod_rewrite, curl, jq or sqlite3
# is missing.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"
. "$TH_SRCDIR/tests/lib/scenario.sh"
APACHE=$TH_SRCDIR/tests/lib/apache.sh
RECIPE=conf/htaccess-cgi.example
LABEL="shared hosting (.htaccess + CGI)"

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_tools curl jq sqlite3
# PKG-3 is about the database file a shared host keeps beside the site: SQLite in the
# PostgreSQL pass of scripts/test.sh too.
unset TH_TEST_PG
why=$(sh "$APACHE" check htaccess-cgi) || skip "$why"

scratch th-shared-cgi
# The server runs as an unprivileged user when we are root: let it through to its dir.
chmod 711 "$T"
on_exit 'for d in cgi prefork nocgi norewrite; do sh "$APACHE" stop "$T/$d"; done'
# SEC-1 (decision-040): the .htaccess as shipped, with its login on; the requests below
# log in as their participant (tests/lib/a2a.sh basic_auth).
require_tools openssl
basic_auth "$T/auth"
BAIL_LOGS=("$T/cgi/error.log" "$T/cgi/apache.out")
SERVE_USER=$(if [ "$(id -u)" = 0 ]; then echo "${TH_APACHE_USER:-nobody}"; else id -un; fi)

# The first bytes of $T/body are not an ELF header (the program served as a file).
not_elf() { [ "$(head -c 4 "$T/body" | od -An -tx1 | tr -d ' \n')" != 7f454c46 ]; }

# ------------------------------------------------------------------ the recipe itself
check "PKG-3 $RECIPE runs the program as cgi-script under mod_cgi or mod_cgid, routes every URL to it and guards a host without either" \
	'head -n1 "$TH_SRCDIR/$RECIPE" | grep -q "SPDX-License-Identifier"' \
	'grep -Eq "^Options \+ExecCGI" "$TH_SRCDIR/$RECIPE"' \
	'[ "$(grep -Ec "^[[:space:]]*SetHandler cgi-script$" "$TH_SRCDIR/$RECIPE")" = 2 ]' \
	'grep -Eq "^<IfModule !mod_cgi.c>$" "$TH_SRCDIR/$RECIPE"' \
	'grep -Eq "^[[:space:]]*<IfModule !mod_cgid.c>$" "$TH_SRCDIR/$RECIPE"' \
	'grep -Eq "^RewriteRule \^ tiny-harness.cgi \[END\]$" "$TH_SRCDIR/$RECIPE"' \
	'grep -Eq "^RewriteCond %\{HTTP:Content-Length\} -gt1048576$" "$TH_SRCDIR/$RECIPE"'

# ------------------------------------------------------------------ a host with mod_cgid
# Only the overrides the recipe says it needs (AllowOverride All on the other hosts).
OVERRIDE="Options=ExecCGI,SymLinksIfOwnerMatch,Indexes FileInfo AuthConfig"
BASE=$(TH_HOST_OVERRIDE=$OVERRIDE sh "$APACHE" start htaccess-cgi "$T/cgi" 1) || bail "$LABEL did not start"
DB=$T/cgi/tiny-harness.db
SITE=$T/cgi/htdocs/agent
echo "# $LABEL at $BASE, state in $T/cgi, site in $SITE"
check "PKG-3 the upload is only .htaccess (the recipe, its AuthUserFile pointed at the password file), the program and its configuration ($(cd "$SITE" && find . -type f | LC_ALL=C sort | tr '\n' ' '))" \
	'[ "$(cd "$SITE" && find . -type f | LC_ALL=C sort | tr "\n" " ")" = "./.htaccess ./conf/tiny-harness.conf ./tiny-harness.cgi " ]' \
	'diff <(grep -v "^[[:space:]]*AuthUserFile " "$TH_SRCDIR/$RECIPE") <(grep -v "^[[:space:]]*AuthUserFile " "$SITE/.htaccess") >/dev/null' \
	'grep -qx "    AuthUserFile \"$TH_HTPASSWD\"" "$SITE/.htaccess"' \
	'! grep -v "AllowOverride" "$T/cgi/httpd.conf" | grep -q "cgi-script\|ExecCGI\|RewriteRule"' \
	'grep -qx "    AllowOverride $OVERRIDE" "$T/cgi/httpd.conf"'

http GET /.well-known/agent-card.json "" ""
check "PKG-3 CARD-1 the card answers 200 through $LABEL, valid JSON with the base URL" \
	'[ "$STATUS" = 200 ]' 'jq -e . "$T/body" >/dev/null' '[ "$(jqb .name)" = tiny-harness ]' \
	'[ "$(jqb "[.supportedInterfaces[] | select(.protocolBinding == \"JSONRPC\") | .url][0]")" = "$BASE" ]'

http POST / "$(rpc 1 SendMessage "$(msg m1 "plan the release")")"
TASK=$(jqb .result.task.id)
check "PKG-3 A2A-1 SendMessage through $LABEL answers a task parked in INPUT_REQUIRED" \
	'[ "$STATUS" = 200 ]' has_task \
	'[ "$(jqb .result.task.status.state)" = TASK_STATE_INPUT_REQUIRED ]' \
	'texts .result.task | grep -q "plan the release"'

auth_checks "$LABEL"

http POST / "$(rpc 2 SendMessage "$(msg m2 "a follow-up" "$TASK")")"
check "PKG-3 TASK-6 a follow-up through $LABEL runs a turn on the same task" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .result.task.id)" = "$TASK" ]' \
	'texts .result.task | grep -q "a follow-up"'

http POST / "$(rpc 3 GetTask "{\"id\":\"$TASK\"}")"
check "PKG-3 A2A-1 GetTask through $LABEL returns the task with both user messages" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .result.id)" = "$TASK" ]' \
	'[ "$(jqb "[.result.history[] | select(.role == \"ROLE_USER\") | .messageId] | join(\",\")")" = m1,m2 ]'
http GET "/tasks/$TASK" ""
check "PKG-3 A2A-1 REST GET /tasks/{id} through $LABEL" '[ "$STATUS" = 200 ]' '[ "$(jqb .id)" = "$TASK" ]'

head -c 1048577 /dev/zero | tr '\0' a >"$T/huge"
REQ_DESC="POST / with a 1048577-byte body (Content-Length)"
STATUS=$(curl -s -o "$T/body" -w '%{http_code}' --max-time 30 -H 'Expect:' -H 'A2A-Version: 1.0' \
	-H 'X-Participant-Id: alice' "${ALICE[@]}" -H 'Content-Type: application/json' --data-binary @"$T/huge" "$BASE")
check "PKG-3 LIM-1 a body of 1 MiB + 1 byte is refused with 413 through $LABEL (not an empty reply)" '[ "$STATUS" = 413 ]'
REQ_DESC="POST / with a 1048577-byte chunked body"
STATUS=$(curl -s -o "$T/body" -w '%{http_code}' --max-time 30 -H 'Transfer-Encoding: chunked' -H 'A2A-Version: 1.0' \
	-H 'X-Participant-Id: alice' "${ALICE[@]}" -H 'Content-Type: application/json' --data-binary @"$T/huge" "$BASE")
check "PKG-3 LIM-1 a chunked request body is refused with 411 through $LABEL (not an empty reply)" '[ "$STATUS" = 411 ]'
printf '%s' "$(rpc 4 SendMessage "$(msg big1 "$(head -c 200000 /dev/zero | tr '\0' a)" "$TASK")")" >"$T/big"
REQ_DESC="POST / SendMessage with a 200000-byte text part"
STATUS=$(curl -s -o "$T/body" -w '%{http_code}' --max-time 30 -H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' "${ALICE[@]}" \
	-H 'Content-Type: application/json' --data-binary @"$T/big" "$BASE")
check "PKG-3 LIM-1 a 200 KB request reaches the program whole through $LABEL (its own InvalidParams naming the text limit)" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .error.code)" = -32602 ]'

http GET /tiny-harness.cgi ""
bin_status=$STATUS
bin_elf=$(not_elf && echo no || echo yes)
http GET /conf/tiny-harness.conf ""
conf_status=$STATUS
conf_leak=$(grep -c '^base_url' "$T/body")
http GET /.htaccess ""
check "PKG-3 neither the program ($bin_status), its configuration ($conf_status) nor .htaccess ($STATUS) is served as a file" \
	'[ "$bin_status" != 200 ] || [ "$bin_elf" = no ]' '[ "$bin_elf" = no ]' \
	'[ "$conf_status" != 200 ] || [ "$conf_leak" = 0 ]' '[ "$conf_leak" = 0 ]' \
	'! grep -q "RewriteRule" "$T/body"'

check "PKG-3 the database is where the site's configuration says ($DB), outside the document root, and holds the task" \
	'grep -qx "db = $DB" "$SITE/conf/tiny-harness.conf"' '[ -f "$DB" ]' \
	'[ -z "$(find "$T/cgi/htdocs" -name "*.db*")" ]' \
	'[ "$(sq "SELECT COUNT(*) FROM tasks WHERE id = '"'"'$TASK'"'"'")" = 1 ]'
check "PKG-3 the database and its directory belong to the user the server runs the program as ($SERVE_USER), and migrate said so" \
	'[ "$(stat -c %U "$DB")" = "$SERVE_USER" ]' '[ "$(stat -c %U "$T/cgi")" = "$SERVE_USER" ]' \
	'grep -q "^$DB: owned by $SERVE_USER (uid [0-9]*); the user the web server runs tiny-harness as must be able to write it and $T/cgi\$" "$T/cgi/migrate.out"'
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$T/rootdb"
	(cd "$T/rootdb" && TINY_HARNESS_DB=$T/rootdb/x.db "$TH_BIN" migrate) >"$T/body" 2>"$T/rootdb/err"
	check "PKG-3 migrate run as root warns that no web server runs the program as root" \
		'[ -f "$T/rootdb/x.db" ]' 'grep -q "warning: $T/rootdb/x.db belongs to root" "$T/rootdb/err"' \
		'grep -q "chown -R USER $T/rootdb\$" "$T/rootdb/err"'
fi

apid=$(cat "$T/cgi/apache.pid" 2>/dev/null)
sh "$APACHE" stop "$T/cgi"
check "PKG-3 stopping $LABEL leaves no process behind" '[ -n "$apid" ]' '! alive "$apid"'

# ------------------------------------------------------------------ a host with mod_cgi
BASE=$(TH_HOST_MODULES="mpm_prefork authz_core rewrite env cgi auth_basic authn_core authn_file authz_user" sh "$APACHE" start htaccess-cgi "$T/prefork" 1) ||
	BASE=
if [ -n "$BASE" ]; then
	http POST / "$(rpc 1 SendMessage "$(msg m1 "on mod_cgi")")"
	TASK=$(jqb .result.task.id)
	http POST / "$(rpc 2 GetTask "{\"id\":\"$TASK\"}")"
fi
check "PKG-3 the same upload on a host with mod_cgi (prefork) instead of mod_cgid answers a task and GetTask" \
	'[ -n "$BASE" ]' '[ "$STATUS" = 200 ]' has_task '[ "$(jqb .result.id)" = "$TASK" ]'
sh "$APACHE" stop "$T/prefork"

# ------------------------------------------------------------------ hosts without CGI
# Neither mod_cgi nor mod_cgid: the guard answers 503 naming them; the binary stays put.
BASE=$(TH_HOST_MODULES="mpm_event authz_core rewrite env auth_basic authn_core authn_file authz_user" TH_SERVER_EXPECT=503 \
	sh "$APACHE" start htaccess-cgi "$T/nocgi" 1) || BASE=
if [ -n "$BASE" ]; then
	http POST / "$(rpc 1 SendMessage "$(msg m1 "hello")")"
	nocgi_status=$STATUS
	nocgi_says=$(grep -c "neither mod_cgi nor mod_cgid" "$T/body")
	http GET /tiny-harness.cgi ""
fi
check "PKG-3 on a host without mod_cgi and mod_cgid $RECIPE answers 503 naming them (${nocgi_status:-none}) and never serves the program (${STATUS:-none})" \
	'[ -n "$BASE" ]' '[ "$nocgi_status" = 503 ]' '[ "$nocgi_says" -ge 1 ]' \
	'[ "$STATUS" != 200 ]' not_elf
sh "$APACHE" stop "$T/nocgi"

# Without mod_rewrite as well the .htaccess cannot be read: an error, still not the binary.
BASE=$(TH_HOST_MODULES="mpm_event authz_core env auth_basic authn_core authn_file authz_user" TH_SERVER_EXPECT=500 \
	sh "$APACHE" start htaccess-cgi "$T/norewrite" 1) || BASE=
if [ -n "$BASE" ]; then
	http GET /tiny-harness.cgi ""
fi
check "PKG-3 on a host without CGI or mod_rewrite the program is not served either (${STATUS:-none})" \
	'[ -n "$BASE" ]' '[ "$STATUS" -ge 500 ]' not_elf
sh "$APACHE" stop "$T/norewrite"

tap_done
