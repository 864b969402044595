/* SPDX-License-Identifier: Apache-2.0 */
/* idrule.h — the one rule for participant ids (ID-6), shared by the configuration (the
 * anonymous participant), the bindings (X-Participant-Id, REMOTE_USER) and the domain
 * (task envelopes, channel members, /ask, /invite, /role). */
#ifndef TH_UTIL_IDRULE_H
#define TH_UTIL_IDRULE_H

#include <stddef.h>

#include "util/err.h"

/* The agent's own participant id (TH_AGENT_ID in the domain). */
#define TH_ID_AGENT "tiny-harness"

/* ID-6, SEC-5: 1 when id is not the agent's id but reads as it: the same letters in
 * another case, accented, or written with look-alike letters (Cyrillic, Greek,
 * fullwidth, mathematical), other dashes, or invisible characters in between. */
int th_id_mimics_agent(const char *id, size_t len);

/* ID-6: the rule for every participant id, wherever it comes from (X-Participant-Id,
 * REMOTE_USER, a task envelope, a channel's members, /ask, /invite, /role): 1 to max
 * bytes of UTF-8 with no white space and no control characters, so that an id reads
 * the same in a header, a command line and JSON, and is never cut or joined; and
 * no id th_id_mimics_agent flags (the agent's own id is allowed here: a task's
 * participants name it; the bindings refuse it as a sender). what
 * names the id's source in the TH_EINVAL message ("payload.participants[0].id"). */
th_err th_id_check(const char *id, size_t len, size_t max, const char *what, struct th_error *e);

/* TEN-1: a tenant is 1 to TH_TENANT_MAX bytes of ASCII letters, digits, '-' and '_',
 * starting with a letter or a digit, and none of the words a REST path starts with
 * ("tasks", "ui", "extendedAgentCard"): it is a path segment as it is, never escaped. ""
 * is the default tenant. One rule for requests (params.tenant, a path's /{tenant}) and
 * the configuration key tenants; TH_TENANT_RULE says it in an error message. */
#define TH_TENANT_MAX 64
#define TH_TENANT_RULE                                                                             \
	"1 to 64 letters, digits, '-' or '_', starting with a letter or digit, and not tasks, "    \
	"ui or extendedAgentCard"
/* 1 when s (n bytes) is a tenant under that rule ("" is not: the default tenant has no
 * path segment). */
int th_tenant_ok(const char *s, size_t n);

#endif
