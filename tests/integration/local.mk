# tests/integration — the real web servers on loopback, started by the test scripts
# through tests/lib/server.sh (lighttpd with conf/lighttpd.conf).
TESTS += tests/integration/lighttpd.sh
EXTRA_DIST += tests/integration/lighttpd.sh tests/lib/server.sh
