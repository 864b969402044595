noinst_LTLIBRARIES += src/model/libth_model.la
src_model_libth_model_la_SOURCES = \
	src/model/model.c src/model/model.h src/model/model_int.h \
	src/model/output.c \
	src/model/echo.c src/model/exec.c src/model/openai.c
src_libth_la_LIBADD += src/model/libth_model.la

# The backends' own suite (TURN-2, CTL-3): real programs under tests/model/ for exec,
# a loopback Chat Completions server (tests/model/fake_openai.py) for openai.
check_PROGRAMS += tests/unit/check_model
TESTS += tests/unit/check_model
tests_unit_check_model_SOURCES = tests/unit/check_model.c
tests_unit_check_model_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_model_CPPFLAGS = $(AM_CPPFLAGS) -DTH_TEST_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_check_model_LDADD = src/model/libth_model.la src/config/libth_config.la \
	src/util/libth_util.la $(CHECK_LIBS) $(TH_LIBS)
EXTRA_DIST += tests/model
