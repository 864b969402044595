# src/push — push notifications (PUSH-2..PUSH-4), a leaf: callback URL checks, secrets
# sealed with libcrypto, and the outbox sender (libcurl). The config operations (PUSH-1)
# are ops/pushcfg.c's.
noinst_LTLIBRARIES += src/push/libth_push.la
src_push_libth_push_la_SOURCES = src/push/push.h src/push/push_int.h \
	src/push/url.c \
	src/push/secret.c \
	src/push/deliver.c
src_libth_la_LIBADD += src/push/libth_push.la


check_PROGRAMS += tests/unit/check_push
TESTS += tests/unit/check_push
tests_unit_check_push_SOURCES = tests/unit/check_push.c \
	tests/unit/harness_fixture.c tests/unit/harness_fixture.h
tests_unit_check_push_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_push_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_check_push_LDADD = src/libth.la $(CHECK_LIBS) $(TH_LIBS)
