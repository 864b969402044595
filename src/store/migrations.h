/* SPDX-License-Identifier: Apache-2.0 */
/* migrations.h — the SQL migrations embedded at build time (private to src/store).
 * The tables are generated from sql/NNN_*.sql and sql/postgresql/NNN_*.sql by
 * gen-migrations.sh into the build directory's src/store/migrations.c. */
#ifndef TH_STORE_MIGRATIONS_H
#define TH_STORE_MIGRATIONS_H

struct th_migration {
	int version;      /* NNN of the file name; the user_version after applying it */
	const char *name; /* file name, for messages */
	const char *sql;  /* the whole file */
};

/* SQLite's, from sql/NNN_name.sql, and PostgreSQL's, from sql/postgresql/NNN_name.sql:
 * the first PostgreSQL file brings a new database to its version in one step; both
 * lists end at the same version (check_store tests it). */
extern const struct th_migration th_store_migrations[];
extern const int th_store_migrations_n;
extern const struct th_migration th_store_pg_migrations[];
extern const int th_store_pg_migrations_n;

#endif
