/* SPDX-License-Identifier: Apache-2.0 */
#include "util/idrule.h"

#include "util/jsonx.h"

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
	return TH_OK;
}
