# src/store — every SQL statement of the project (STORE-1).
#
# The migrations under sql/ are compiled into the binary: gen-migrations.sh turns the
# files listed in TH_SQL_MIGRATIONS and TH_SQL_PG_MIGRATIONS (in order) into
# src/store/migrations.c in the build directory. Add a new migration to both lists, as
# sql/NNN_name.sql and sql/postgresql/NNN_name.sql.
TH_SQL_MIGRATIONS = \
	$(top_srcdir)/sql/001_init.sql \
	$(top_srcdir)/sql/002_collaboration.sql \
	$(top_srcdir)/sql/003_confirm.sql \
	$(top_srcdir)/sql/004_write_path.sql \
	$(top_srcdir)/sql/005_checks.sql \
	$(top_srcdir)/sql/006_waiting.sql \
	$(top_srcdir)/sql/007_event_seq.sql \
	$(top_srcdir)/sql/008_api_keys.sql \
	$(top_srcdir)/sql/009_lean.sql \
	$(top_srcdir)/sql/010_lean_schema.sql \
	$(top_srcdir)/sql/011_event_ends.sql \
	$(top_srcdir)/sql/012_pg_counts.sql \
	$(top_srcdir)/sql/013_list_index_order.sql \
	$(top_srcdir)/sql/014_task_numbers.sql \
	$(top_srcdir)/sql/015_idempotency_keys.sql \
	$(top_srcdir)/sql/016_participants_without_rowid.sql \
	$(top_srcdir)/sql/017_dead_letters.sql \
	$(top_srcdir)/sql/018_tenants.sql \
	$(top_srcdir)/sql/019_turn_numbers.sql \
	$(top_srcdir)/sql/020_pg_count_plans.sql \
	$(top_srcdir)/sql/021_pg_count_folds.sql \
	$(top_srcdir)/sql/022_pg_check_domains.sql \
	$(top_srcdir)/sql/023_stream_follows.sql \
	$(top_srcdir)/sql/024_pg_domain_columns.sql
# PostgreSQL's (STORE-6): the first brings a new database to version 7 in one step.
TH_SQL_PG_FIRST = 7
TH_SQL_PG_MIGRATIONS = \
	$(top_srcdir)/sql/postgresql/007_schema.sql \
	$(top_srcdir)/sql/postgresql/008_api_keys.sql \
	$(top_srcdir)/sql/postgresql/009_lean.sql \
	$(top_srcdir)/sql/postgresql/010_lean_schema.sql \
	$(top_srcdir)/sql/postgresql/011_event_ends.sql \
	$(top_srcdir)/sql/postgresql/012_pg_counts.sql \
	$(top_srcdir)/sql/postgresql/013_list_index_order.sql \
	$(top_srcdir)/sql/postgresql/014_task_numbers.sql \
	$(top_srcdir)/sql/postgresql/015_idempotency_keys.sql \
	$(top_srcdir)/sql/postgresql/016_participants_without_rowid.sql \
	$(top_srcdir)/sql/postgresql/017_dead_letters.sql \
	$(top_srcdir)/sql/postgresql/018_tenants.sql \
	$(top_srcdir)/sql/postgresql/019_turn_numbers.sql \
	$(top_srcdir)/sql/postgresql/020_pg_count_plans.sql \
	$(top_srcdir)/sql/postgresql/021_pg_count_folds.sql \
	$(top_srcdir)/sql/postgresql/022_pg_check_domains.sql \
	$(top_srcdir)/sql/postgresql/023_stream_follows.sql \
	$(top_srcdir)/sql/postgresql/024_pg_domain_columns.sql

noinst_LTLIBRARIES += src/store/libth_store.la
src_store_libth_store_la_SOURCES = \
	src/store/store.h src/store/store_int.h src/store/migrations.h \
	src/store/db.c \
	src/store/stmt.c \
	src/store/rows.c \
	src/store/pg.c \
	src/store/pg_memo.c \
	src/store/follows.c \
	src/store/group.c \
	src/store/tasks.c \
	src/store/history.c \
	src/store/expect.c \
	src/store/refs.c \
	src/store/window.c \
	src/store/turns.c \
	src/store/confirm.c \
	src/store/channels.c \
	src/store/help_requests.c \
	src/store/plans.c \
	src/store/subtasks.c \
	src/store/surfaces.c \
	src/store/push.c \
	src/store/keys.c \
	src/store/idempotency.c \
	src/store/ops.c
nodist_src_store_libth_store_la_SOURCES = src/store/migrations.c
src_libth_la_LIBADD += src/store/libth_store.la

BUILT_SOURCES += src/store/migrations.c
CLEANFILES += src/store/migrations.c
EXTRA_DIST += src/store/gen-migrations.sh

src/store/migrations.c: $(top_srcdir)/src/store/gen-migrations.sh $(TH_SQL_MIGRATIONS) \
		$(TH_SQL_PG_MIGRATIONS)
	$(AM_V_GEN)$(MKDIR_P) src/store && \
	$(SHELL) $(top_srcdir)/src/store/gen-migrations.sh \
		th_store_migrations 1 $(TH_SQL_MIGRATIONS) -- \
		th_store_pg_migrations $(TH_SQL_PG_FIRST) $(TH_SQL_PG_MIGRATIONS) > $@.tmp && \
	mv $@.tmp $@

check_PROGRAMS += tests/unit/check_store
TESTS += tests/unit/check_store
tests_unit_check_store_SOURCES = tests/unit/check_store.c tests/unit/pg_fixture.c \
	tests/unit/pg_fixture.h tests/unit/text_fixture.h
tests_unit_check_store_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_store_LDADD = src/domain/libth_domain.la src/a2a/libth_a2a.la \
	src/store/libth_store.la src/util/libth_util.la $(CHECK_LIBS) $(TH_LIBS)

check_PROGRAMS += tests/unit/check_group
TESTS += tests/unit/check_group
tests_unit_check_group_SOURCES = tests/unit/check_group.c tests/unit/pg_fixture.c \
	tests/unit/pg_fixture.h tests/unit/text_fixture.h
tests_unit_check_group_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_group_LDADD = src/store/libth_store.la src/util/libth_util.la \
	$(CHECK_LIBS) $(TH_LIBS)

# STORE-9: a store heals by itself (read-only file, I/O error, directory made later); as
# root each case runs in a child that drops to uid 65534.
check_PROGRAMS += tests/unit/check_heal
TESTS += tests/unit/check_heal
tests_unit_check_heal_SOURCES = tests/unit/check_heal.c
tests_unit_check_heal_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_heal_LDADD = src/store/libth_store.la src/util/libth_util.la \
	$(CHECK_LIBS) $(TH_LIBS)
