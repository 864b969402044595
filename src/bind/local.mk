# src/bind — the two A2A bindings (JSON-RPC 2.0, HTTP+JSON) and the error table,
# listed top-down: router and card, the web app, the method guard, the bindings, SSE,
# error bodies, shared steps; the metrics endpoint and the request log line (metrics.c).
noinst_LTLIBRARIES += src/bind/libth_bind.la
src_bind_libth_bind_la_SOURCES = \
	src/bind/bind.c src/bind/bind.h src/bind/bind_int.h \
	src/bind/metrics.c \
	src/bind/deadletters.c \
	src/bind/origin.c \
	src/bind/web.c src/bind/method.c \
	src/bind/jsonrpc.c \
	src/bind/rest.c \
	src/bind/handoff.c \
	src/bind/stream.c src/bind/errors.c src/bind/request.c
src_libth_la_LIBADD += src/bind/libth_bind.la

check_PROGRAMS += tests/unit/check_bind
TESTS += tests/unit/check_bind
tests_unit_check_bind_SOURCES = tests/unit/check_bind.c tests/unit/text_fixture.h
tests_unit_check_bind_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_bind_LDADD = src/libth.la $(CHECK_LIBS) $(TH_LIBS)
