/* SPDX-License-Identifier: Apache-2.0 */
/* text.h — small text helpers shared by the readers of configuration and command files
 * and the decoders of hex and percent encodings. */
#ifndef TH_UTIL_TEXT_H
#define TH_UTIL_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* The value of one hex digit (0-9, a-f, A-F), or -1. */
int th_hexval(int c);
/* The same for lowercase hex only (0-9, a-f): what this server writes in its page
 * tokens, so that a hand-made uppercase one is refused (LIM-4). */
int th_hexval_lower(int c);

/* s without its leading and trailing white space: returns a pointer into s and cuts the
 * trailing space off in place. */
char *th_trim(char *s);

/* Splits line at its first sep into a trimmed *key and *value (pointers into line,
 * which is changed in place): 0, or -1 when line has no sep. */
int th_split_pair(char *line, char sep, char **key, char **value);

/* An age as `purge --older-than` and the retain_* keys write it: a whole number and one
 * unit, d (days), h, m or s ("30d", "12h", "90m", "45s"), at most 100 years. *ms gets it
 * in milliseconds: 0, or -1 when s is none of those. */
int th_parse_age(const char *s, int64_t *ms);
/* ms as th_parse_age reads it back, in the largest unit that divides it ("30d", "90m";
 * 0 is "0s"), into out (size bytes). */
void th_age_text(int64_t ms, char *out, size_t size);

/* 1 when s is a postgresql:// or postgres:// URI (STORE-6: a db that is one selects
 * PostgreSQL), 0 otherwise (NULL included). */
int th_is_pg_uri(const char *s);

#endif
