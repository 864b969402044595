# src/a2ui — A2UI 0.9 surfaces (UI-1..UI-4, EXT-4): pure functions over json-c, no SQL, no HTTP.
noinst_LTLIBRARIES += src/a2ui/libth_a2ui.la
src_a2ui_libth_a2ui_la_SOURCES = \
	src/a2ui/a2ui.h src/a2ui/a2ui_int.h \
	src/a2ui/catalog.c src/a2ui/apply.c src/a2ui/client.c src/a2ui/build.c
src_libth_la_LIBADD += src/a2ui/libth_a2ui.la

check_PROGRAMS += tests/unit/check_a2ui tests/unit/a2ui_dump
TESTS += tests/unit/check_a2ui
tests_unit_check_a2ui_SOURCES = tests/unit/check_a2ui.c
tests_unit_check_a2ui_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_a2ui_LDADD = src/a2ui/libth_a2ui.la src/util/libth_util.la \
	$(CHECK_LIBS) $(TH_LIBS)

# a2ui_dump prints what the module emits (and runs th_a2ui_apply on given files) for the
# contract test, which validates it against the official A2UI schemas from @a2ui/web_core.
tests_unit_a2ui_dump_SOURCES = tests/unit/a2ui_dump.c
tests_unit_a2ui_dump_LDADD = src/a2ui/libth_a2ui.la src/util/libth_util.la $(TH_LIBS)

TESTS += tests/contract/a2ui_schema.mjs
EXTRA_DIST += tests/contract/a2ui_schema.mjs
