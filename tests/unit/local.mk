# tests/unit — Check suites of the lead's layers (config, harness). Each area's own
# suite is registered in that area's local.mk.
check_PROGRAMS += tests/unit/check_harness tests/unit/check_config
TESTS += tests/unit/check_harness tests/unit/check_config

tests_unit_check_harness_SOURCES = tests/unit/check_harness.c \
	tests/unit/harness_fixture.c tests/unit/harness_fixture.h tests/unit/text_fixture.h
tests_unit_check_harness_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_harness_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_check_harness_LDADD = src/libth.la $(CHECK_LIBS) $(TH_LIBS)

# SCALE-1 (decision-054): a SendMessage's round trips on PostgreSQL (TH_TEST_PG).
check_PROGRAMS += tests/unit/check_pgtrips
TESTS += tests/unit/check_pgtrips
tests_unit_check_pgtrips_SOURCES = tests/unit/check_pgtrips.c tests/unit/harness_fixture.c \
	tests/unit/harness_fixture.h tests/unit/pg_fixture.c tests/unit/pg_fixture.h \
	tests/unit/text_fixture.h
tests_unit_check_pgtrips_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_pgtrips_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_check_pgtrips_LDADD = src/libth.la $(CHECK_LIBS) $(TH_LIBS)

tests_unit_check_config_SOURCES = tests/unit/check_config.c
tests_unit_check_config_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_config_LDADD = src/config/libth_config.la src/domain/libth_domain.la \
	src/util/libth_util.la $(CHECK_LIBS) $(TH_LIBS)

check_PROGRAMS += tests/unit/check_util
TESTS += tests/unit/check_util
tests_unit_check_util_SOURCES = tests/unit/check_util.c tests/unit/stderr_fixture.h
tests_unit_check_util_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_util_LDADD = src/domain/libth_domain.la src/util/libth_util.la \
	$(CHECK_LIBS) $(TH_LIBS)

check_PROGRAMS += tests/unit/check_stream
TESTS += tests/unit/check_stream
tests_unit_check_stream_SOURCES = tests/unit/check_stream.c \
	tests/unit/harness_fixture.c tests/unit/harness_fixture.h \
	tests/unit/testvfs.c tests/unit/testvfs.h
tests_unit_check_stream_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_stream_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_check_stream_LDADD = src/libth.la $(CHECK_LIBS) $(TH_LIBS)

check_PROGRAMS += tests/unit/check_collab
TESTS += tests/unit/check_collab
tests_unit_check_collab_SOURCES = tests/unit/check_collab.c \
	tests/unit/harness_fixture.c tests/unit/harness_fixture.h
tests_unit_check_collab_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_collab_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_check_collab_LDADD = src/libth.la $(CHECK_LIBS) $(TH_LIBS)

check_PROGRAMS += tests/unit/check_ui
TESTS += tests/unit/check_ui
tests_unit_check_ui_SOURCES = tests/unit/check_ui.c \
	tests/unit/harness_fixture.c tests/unit/harness_fixture.h
tests_unit_check_ui_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_ui_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_check_ui_LDADD = src/libth.la $(CHECK_LIBS) $(TH_LIBS)

# Turns with tool calls, driven by a real model program through the exec backend.
check_PROGRAMS += tests/unit/check_intrinsics
TESTS += tests/unit/check_intrinsics
EXTRA_DIST += tests/unit/scripted_model.py
tests_unit_check_intrinsics_SOURCES = tests/unit/check_intrinsics.c \
	tests/unit/harness_fixture.c tests/unit/harness_fixture.h
tests_unit_check_intrinsics_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_intrinsics_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_check_intrinsics_LDADD = src/libth.la $(CHECK_LIBS) $(TH_LIBS)

# The worker's stream thread over a socketpair standing in for the web server (STREAM-6).
check_PROGRAMS += tests/unit/check_streams
TESTS += tests/unit/check_streams
tests_unit_check_streams_SOURCES = tests/unit/check_streams.c tests/unit/stderr_fixture.h \
	tests/unit/harness_fixture.c tests/unit/harness_fixture.h \
	tests/unit/testvfs.c tests/unit/testvfs.h
tests_unit_check_streams_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_streams_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_check_streams_LDADD = src/libth.la $(CHECK_LIBS) $(TH_LIBS)

# decision-026 at every allocation of one domain write (malloc replaced in the program).
check_PROGRAMS += tests/unit/check_oom
TESTS += tests/unit/check_oom
tests_unit_check_oom_SOURCES = tests/unit/check_oom.c \
	tests/unit/harness_fixture.c tests/unit/harness_fixture.h
tests_unit_check_oom_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_oom_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_check_oom_LDADD = src/libth.la $(CHECK_LIBS) $(TH_LIBS)

# The house rule that no function of src/ runs over 80 lines (scripts/long-functions.sh),
# enforced by the test command (issue 30).
TESTS += tests/unit/house_no_function_over_80_lines.sh
EXTRA_DIST += tests/unit/house_no_function_over_80_lines.sh
# The house rule that docs/architecture.md draws the rooms as the includes have them:
# every arrow drawn is an include, and no include points up the picture (issue 30).
TESTS += tests/unit/house_architecture_arrows.sh
EXTRA_DIST += tests/unit/house_architecture_arrows.sh

# statements.py (STORE-1): every statement of src/store/ prepares against the migrated
# schema, and no statement id carries two SQL texts. Run directly (python3, sqlite3).
TESTS += tests/unit/statements.py
EXTRA_DIST += tests/unit/statements.py

# Simulated power cuts (STORE-8) and injected I/O errors (STORE-7) through a test VFS
# (testvfs.c) registered as SQLite's default, under the real request path.
check_PROGRAMS += tests/unit/check_faults
TESTS += tests/unit/check_faults
tests_unit_check_faults_SOURCES = tests/unit/check_faults.c tests/unit/testvfs.c \
	tests/unit/testvfs.h tests/unit/harness_fixture.c tests/unit/harness_fixture.h
tests_unit_check_faults_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_faults_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_check_faults_LDADD = src/libth.la $(CHECK_LIBS) $(TH_LIBS)

# HOST-2 (decision-084): a write request handed from one worker process to the writer.
check_PROGRAMS += tests/unit/check_handoff
TESTS += tests/unit/check_handoff
tests_unit_check_handoff_SOURCES = tests/unit/check_handoff.c
tests_unit_check_handoff_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_handoff_LDADD = src/libth.la $(CHECK_LIBS) $(TH_LIBS)
