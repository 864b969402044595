/* SPDX-License-Identifier: Apache-2.0 */
#include "util/netaddr.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* An address as 16 bytes: IPv4 is stored IPv4-mapped (::ffff:a.b.c.d), so one
 * comparison serves both families and a mapped client matches a v4 entry. */
struct addr16 {
	unsigned char b[16];
	int v4; /* 1 when written as IPv4: a prefix then counts from bit 96 */
};

static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

static int parse(const char *s, size_t n, struct addr16 *a)
{
	char text[INET6_ADDRSTRLEN + 1];
	if (n == 0 || n >= sizeof text)
		return -1;
	memcpy(text, s, n);
	text[n] = '\0';
	memset(a, 0, sizeof *a);
	if (inet_pton(AF_INET, text, a->b + 12) == 1) {
		memcpy(a->b, mapped, sizeof mapped);
		a->v4 = 1;
		return 0;
	}
	return inet_pton(AF_INET6, text, a->b) == 1 ? 0 : -1;
}

static int is_mapped(const struct addr16 *a)
{
	return memcmp(a->b, mapped, sizeof mapped) == 0;
}

int th_addr_is_loopback(const char *addr)
{
	struct addr16 a;
	if (addr == NULL || parse(addr, strlen(addr), &a) != 0)
		return 0;
	if (is_mapped(&a))
		return a.b[12] == 127;
	static const unsigned char one[16] = {[15] = 1};
	return memcmp(a.b, one, sizeof one) == 0;
}

/* One entry, "ADDR" or "ADDR/PREFIX", into its address and its prefix in bits of the
 * 16-byte form; -1 when it is neither. */
static int parse_entry(const char *s, size_t n, struct addr16 *a, int *bits)
{
	const char *slash = memchr(s, '/', n);
	size_t alen = slash != NULL ? (size_t)(slash - s) : n;
	if (parse(s, alen, a) != 0)
		return -1;
	int max = a->v4 ? 32 : 128;
	int p = max;
	if (slash != NULL) {
		const char *d = slash + 1, *end = s + n;
		if (d == end || end - d > 3)
			return -1;
		p = 0;
		for (; d < end; d++) {
			if (*d < '0' || *d > '9')
				return -1;
			p = p * 10 + (*d - '0');
		}
		if (p > max)
			return -1;
	}
	*bits = a->v4 ? 96 + p : p;
	return 0;
}

static int prefix_equal(const struct addr16 *x, const struct addr16 *y, int bits)
{
	int whole = bits / 8, rest = bits % 8;
	if (memcmp(x->b, y->b, (size_t)whole) != 0)
		return 0;
	if (rest == 0)
		return 1;
	unsigned char mask = (unsigned char)(0xff << (8 - rest));
	return (x->b[whole] & mask) == (y->b[whole] & mask);
}

int th_addr_in_list(const char *addr, const char *list)
{
	struct addr16 a;
	if (addr == NULL || list == NULL || parse(addr, strlen(addr), &a) != 0)
		return 0;
	for (const char *p = list + strspn(list, " ,\t"); *p != '\0'; p += strspn(p, " ,\t")) {
		size_t n = strcspn(p, " ,\t");
		struct addr16 entry;
		int bits;
		if (parse_entry(p, n, &entry, &bits) == 0 && prefix_equal(&a, &entry, bits))
			return 1;
		p += n;
	}
	return 0;
}

th_err th_addr_list_check(const char *key, const char *list, struct th_error *e)
{
	for (const char *p = list + strspn(list, " ,\t"); *p != '\0'; p += strspn(p, " ,\t")) {
		size_t n = strcspn(p, " ,\t");
		struct addr16 entry;
		int bits;
		if (parse_entry(p, n, &entry, &bits) != 0)
			return th_error_set(e, TH_EINVAL,
			                    "configuration key %s: '%.*s' is not an IP address or "
			                    "ADDRESS/PREFIX block (e.g. 10.0.0.5, 10.0.0.0/8, "
			                    "fd00::/8)",
			                    key, (int)(n > 64 ? 64 : n), p);
		p += n;
	}
	return TH_OK;
}

int th_url_host_is_loopback(const char *url)
{
	const char *p = url != NULL ? strstr(url, "://") : NULL;
	if (p == NULL)
		return 0;
	p += 3;
	size_t auth = strcspn(p, "/?#");
	/* userinfo@host: the host is after the last '@' within the authority. */
	for (size_t i = auth; i > 0; i--)
		if (p[i - 1] == '@') {
			auth -= i;
			p += i;
			break;
		}
	size_t n;
	if (auth > 0 && p[0] == '[') {
		const char *close = memchr(p, ']', auth);
		if (close == NULL)
			return 0;
		p++;
		n = (size_t)(close - p);
	} else {
		const char *colon = memchr(p, ':', auth);
		n = colon != NULL ? (size_t)(colon - p) : auth;
	}
	if (n > 0 && p[n - 1] == '.') /* "localhost." is the same name */
		n--;
	if ((n == 9 && strncasecmp(p, "localhost", 9) == 0) ||
	    (n > 10 && strncasecmp(p + n - 10, ".localhost", 10) == 0))
		return 1;
	char text[INET6_ADDRSTRLEN + 1];
	if (n == 0 || n >= sizeof text)
		return 0;
	memcpy(text, p, n);
	text[n] = '\0';
	return th_addr_is_loopback(text);
}
