/* SPDX-License-Identifier: Apache-2.0 */
/* rows.c — what the column tables of the statement layer (struct th_row_def,
 * store_int.h) leave in a row struct, freed again, and the growing arrays rows are read
 * into: shared by both backends' row readers (stmt.c for SQLite, pg.c for PostgreSQL),
 * which is why it is a file of its own that calls neither; and the lookup of a stored
 * enum name (th_name_index). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_int.h"

#define FIELD(row, col, type) ((type *)(void *)((char *)(row) + (col)->off))

void th_row_free(const struct th_row_def *def, void *row)
{
	if (row == NULL)
		return;
	for (size_t k = 0; k < def->ncols; k++) {
		const struct th_col *c = &def->cols[k];
		if (c->t == 't')
			free(*FIELD(row, c, char *));
		else if (c->t == 'b')
			free(*FIELD(row, c, unsigned char *));
	}
	memset(row, 0, def->size);
}

void th_rows_free(const struct th_row_def *def, void *rows, size_t n)
{
	if (rows == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		th_row_free(def, (char *)rows + i * def->size);
	free(rows);
}

int th_name_index(const char *const *names, size_t n, const char *name, int absent)
{
	for (size_t i = 0; name != NULL && i < n; i++)
		if (names[i] != NULL && strcmp(names[i], name) == 0)
			return (int)i;
	return absent;
}

int th_grow(void **arr, size_t *cap, size_t cnt, size_t elem)
{
	if (cnt < *cap)
		return 0;
	size_t ncap = *cap == 0 ? 8 : *cap * 2;
	if (ncap > SIZE_MAX / elem)
		return -1;
	void *grown = realloc(*arr, ncap * elem);
	if (grown == NULL)
		return -1;
	*arr = grown;
	*cap = ncap;
	return 0;
}
