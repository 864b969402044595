/* SPDX-License-Identifier: Apache-2.0 */
/* migrations.h — the SQL migrations embedded at build time (private to src/store).
 * The table is generated from sql/NNN_*.sql by gen-migrations.sh into the build
 * directory's src/store/migrations.c. */
#ifndef TH_STORE_MIGRATIONS_H
#define TH_STORE_MIGRATIONS_H

struct th_migration {
	int version;      /* NNN of the file name; the user_version after applying it */
	const char *name; /* file name, for messages */
	const char *sql;  /* the whole file */
};

extern const struct th_migration th_store_migrations[];
extern const int th_store_migrations_n;

#endif
