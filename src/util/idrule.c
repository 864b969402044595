/* SPDX-License-Identifier: Apache-2.0 */
#include "util/idrule.h"

#include <ctype.h>
#include <string.h>

#include "util/jsonx.h"

/* Letters that look like an ASCII letter, by code point: the Cyrillic, Greek and Latin
 * look-alikes that fonts draw the same as the letters of the agent's id. */
static const struct {
	unsigned cp;
	char to;
} look_alike[] = {
    {0x0131, 'i'}, {0x0269, 'i'}, {0x026A, 'i'}, {0x0274, 'n'}, {0x0280, 'r'}, {0x028F, 'y'},
    {0x029C, 'h'}, {0x0391, 'a'}, {0x0392, 'b'}, {0x0395, 'e'}, {0x0396, 'z'}, {0x0397, 'h'},
    {0x0399, 'i'}, {0x039A, 'k'}, {0x039C, 'm'}, {0x039D, 'n'}, {0x039F, 'o'}, {0x03A1, 'p'},
    {0x03A4, 't'}, {0x03A5, 'y'}, {0x03A7, 'x'}, {0x03B1, 'a'}, {0x03B5, 'e'}, {0x03B7, 'n'},
    {0x03B9, 'i'}, {0x03BA, 'k'}, {0x03BD, 'v'}, {0x03BF, 'o'}, {0x03C1, 'p'}, {0x03C4, 't'},
    {0x03C5, 'u'}, {0x0405, 's'}, {0x0406, 'i'}, {0x0408, 'j'}, {0x0410, 'a'}, {0x0412, 'b'},
    {0x0415, 'e'}, {0x041A, 'k'}, {0x041C, 'm'}, {0x041D, 'h'}, {0x041E, 'o'}, {0x0420, 'p'},
    {0x0421, 'c'}, {0x0422, 't'}, {0x0425, 'x'}, {0x0430, 'a'}, {0x0435, 'e'}, {0x043E, 'o'},
    {0x0440, 'p'}, {0x0441, 'c'}, {0x0443, 'y'}, {0x0445, 'x'}, {0x0455, 's'}, {0x0456, 'i'},
    {0x0458, 'j'}, {0x04AE, 'y'}, {0x04BB, 'h'}, {0x0501, 'd'}, {0x1D00, 'a'}, {0x1D07, 'e'},
    {0x1D1B, 't'}, {0xA731, 's'},
};

/* Latin-1 letters U+00C0..U+00FF without their accents ('*' for × and ÷). */
static const char latin1[] = "aaaaaaaceeeeiiiidnooooo*ouuuuyts"
                             "aaaaaaaceeeeiiiidnooooo*ouuuuyty";

/* What code point cp looks like: an ASCII character, 0 for one that shows nothing
 * (combining marks, zero-width and format characters), -1 for anything else. */
static int looks_like(unsigned cp)
{
	if (cp < 0x80)
		return cp >= 'A' && cp <= 'Z' ? (int)(cp - 'A' + 'a') : (int)cp;
	if (cp >= 0xC0 && cp <= 0xFF)
		return latin1[cp - 0xC0];
	if (cp >= 0xFF01 && cp <= 0xFF5E) /* fullwidth forms */
		return looks_like(cp - 0xFEE0);
	if (cp >= 0x1D400 && cp <= 0x1D6A3) /* mathematical letters, 52 to a style */
		return 'a' + (int)((cp - 0x1D400) % 52 % 26);
	if ((cp >= 0x2010 && cp <= 0x2015) || cp == 0x2212 || cp == 0x2043 || cp == 0x02D7 ||
	    cp == 0xFE58 || cp == 0xFE63)
		return '-';
	if ((cp >= 0x0300 && cp <= 0x036F) || cp == 0x00AD || cp == 0x034F || cp == 0x180E ||
	    (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2060 && cp <= 0x2064) || cp == 0xFEFF)
		return 0;
	for (size_t i = 0; i < sizeof look_alike / sizeof look_alike[0]; i++)
		if (look_alike[i].cp == cp)
			return look_alike[i].to;
	return -1;
}

int th_id_mimics_agent(const char *id, size_t len)
{
	static const char agent[] = TH_ID_AGENT;
	size_t at = 0; /* how much of agent the id has matched */
	const unsigned char *p = (const unsigned char *)id, *end = p + len;
	while (p < end) {
		unsigned cp = *p;
		int extra = cp < 0x80 ? 0 : cp < 0xE0 ? 1 : cp < 0xF0 ? 2 : 3;
		if (extra > 0)
			cp &= 0x3Fu >> extra;
		for (int k = 1; k <= extra && p + k < end; k++)
			cp = (cp << 6) | (p[k] & 0x3Fu);
		p += extra + 1;
		int c = looks_like(cp);
		if (c < 0 || (c > 0 && (at >= sizeof agent - 1 || agent[at++] != c)))
			return 0;
	}
	return at == sizeof agent - 1 && (len != sizeof agent - 1 || memcmp(id, agent, len) != 0);
}

th_err th_id_check(const char *id, size_t len, size_t max, const char *what, struct th_error *e)
{
	if (len == 0)
		return th_error_set(e, TH_EINVAL, "%s must not be empty", what);
	if (len > max)
		return th_error_set(e, TH_EINVAL, "%s is %zu bytes; the limit is %zu (max_id)",
		                    what, len, max);
	size_t bad = th_utf8_bad_at((const unsigned char *)id, len);
	if (bad < len)
		return th_error_set(e, TH_EINVAL, "%s is not UTF-8 (byte %zu)", what, bad);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)id[i];
		if (c == ' ' || (c >= '\t' && c <= '\r'))
			return th_error_set(e, TH_EINVAL,
			                    "%s contains white space (byte %zu); a participant id "
			                    "is one word",
			                    what, i);
		if (c < 0x20 || c == 0x7f)
			return th_error_set(e, TH_EINVAL,
			                    "%s contains a control character (byte %zu)", what, i);
	}
	if (th_id_mimics_agent(id, len))
		return th_error_set(e, TH_EINVAL,
		                    "%s looks like the agent's own id '%s'; a participant cannot "
		                    "take it",
		                    what, TH_ID_AGENT);
	return TH_OK;
}

int th_tenant_ok(const char *s, size_t n)
{
	static const char *const reserved[] = {"tasks", "ui", "extendedAgentCard"};
	if (s == NULL || n == 0 || n > TH_TENANT_MAX || !isalnum((unsigned char)s[0]))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
			return 0;
	for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
		if (strlen(reserved[i]) == n && memcmp(s, reserved[i], n) == 0)
			return 0;
	return 1;
}
