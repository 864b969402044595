/* SPDX-License-Identifier: Apache-2.0 */
/* text.h — small text helpers shared by the readers of configuration and command files
 * and the decoders of hex and percent encodings. */
#ifndef TH_UTIL_TEXT_H
#define TH_UTIL_TEXT_H

/* The value of one hex digit (0-9, a-f, A-F), or -1. */
int th_hexval(int c);

/* s without its leading and trailing white space: returns a pointer into s and cuts the
 * trailing space off in place. */
char *th_trim(char *s);

/* Splits line at its first sep into a trimmed *key and *value (pointers into line,
 * which is changed in place): 0, or -1 when line has no sep. */
int th_split_pair(char *line, char sep, char **key, char **value);

#endif
