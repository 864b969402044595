/* SPDX-License-Identifier: Apache-2.0 */
#include "domain/ext.h"

#include <string.h>

static const char *const uris[TH_EXT_COUNT] = {
    TH_EXT_URI_TASK, TH_EXT_URI_CHANNEL, TH_EXT_URI_STATUS, TH_EXT_URI_COMMANDS, TH_EXT_URI_A2UI,
};

const char *th_ext_uri(int i)
{
	return i >= 0 && i < TH_EXT_COUNT ? uris[i] : NULL;
}

static int lookup(const char *s, size_t n)
{
	for (int i = 0; i < TH_EXT_COUNT; i++)
		if (strlen(uris[i]) == n && memcmp(uris[i], s, n) == 0)
			return i;
	return -1;
}

th_err th_ext_parse(const char *hdr, unsigned *bits, struct th_error *e)
{
	*bits = 0;
	if (hdr == NULL)
		return TH_OK;
	struct th_buf unknown;
	th_buf_init(&unknown);
	const char *p = hdr;
	while (*p != '\0') {
		const char *end = strchr(p, ',');
		if (end == NULL)
			end = p + strlen(p);
		const char *a = p, *b = end;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (b > a) {
			int i = lookup(a, (size_t)(b - a));
			if (i >= 0) {
				*bits |= 1u << i;
			} else {
				/* Name each unknown URI once, in the order the client sent them. */
				size_t n = (size_t)(b - a);
				int seen = 0;
				for (const char *q = unknown.data; q != NULL && *q != '\0';) {
					const char *qe = strstr(q, ", ");
					size_t qn = qe ? (size_t)(qe - q) : strlen(q);
					if (qn == n && memcmp(q, a, n) == 0)
						seen = 1;
					q = qe ? qe + 2 : q + qn;
				}
				if (!seen) {
					if (unknown.len > 0)
						th_buf_puts(&unknown, ", ");
					th_buf_append(&unknown, a, n);
				}
			}
		}
		p = *end == ',' ? end + 1 : end;
	}
	th_err rc = TH_OK;
	if (unknown.oom)
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	else if (unknown.len > 0)
		rc = th_error_set(e, TH_EUNSUPPORTED,
		                  "unsupported A2A extension(s): %s; this agent supports only the "
		                  "extensions its card lists",
		                  unknown.data);
	th_buf_free(&unknown);
	if (rc != TH_OK)
		*bits = 0;
	return rc;
}

void th_ext_format(unsigned bits, struct th_buf *out)
{
	for (int i = 0; i < TH_EXT_COUNT; i++) {
		if (!(bits & (1u << i)))
			continue;
		if (out->len > 0)
			th_buf_puts(out, ",");
		th_buf_puts(out, uris[i]);
	}
}
