# src/a2a — the A2A 1.0 wire model (decoders, validators, builders), push config
# requests included.
noinst_LTLIBRARIES += src/a2a/libth_a2a.la
src_a2a_libth_a2a_la_SOURCES = \
	src/a2a/a2a.h src/a2a/a2a_int.h \
	src/a2a/fields.c \
	src/a2a/enums.c \
	src/a2a/message.c \
	src/a2a/requests.c \
	src/a2a/push.c \
	src/a2a/encode.c \
	src/a2a/generation.c
src_libth_la_LIBADD += src/a2a/libth_a2a.la

check_PROGRAMS += tests/unit/check_a2a
TESTS += tests/unit/check_a2a
tests_unit_check_a2a_SOURCES = tests/unit/check_a2a.c
tests_unit_check_a2a_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_a2a_LDADD = src/a2a/libth_a2a.la src/util/libth_util.la $(CHECK_LIBS) $(TH_LIBS)
