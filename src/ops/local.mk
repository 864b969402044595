# src/ops — the operations the service layer calls (ops.h): SendMessage and its intake
# (intake.c), GetTask and ListTasks (query.c), completion and cancellation
# (control.c), push notification configs (pushcfg.c) and streams (stream.c). Built on
# turn/ and domain/.
noinst_LTLIBRARIES += src/ops/libth_ops.la
src_ops_libth_ops_la_SOURCES = \
	src/ops/ops.h \
	src/ops/auth.c src/ops/auth.h \
	src/ops/control.c src/ops/control.h \
	src/ops/intake.c src/ops/intake.h \
	src/ops/pushcfg.c src/ops/pushcfg.h \
	src/ops/stream.c src/ops/stream.h \
	src/ops/query.c
src_libth_la_LIBADD += src/ops/libth_ops.la

# SEC-1: JWTs signed in the test with libcrypto (linked here only; the program loads it
# on use) and API keys in a real store.
check_PROGRAMS += tests/unit/check_auth
TESTS += tests/unit/check_auth
tests_unit_check_auth_SOURCES = tests/unit/check_auth.c
tests_unit_check_auth_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_auth_LDADD = src/libth.la $(CHECK_LIBS) $(TH_LIBS) $(SSL_LIBS)
