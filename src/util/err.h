/* SPDX-License-Identifier: Apache-2.0 */
/* err.h — the project's one error enum and the error record every layer fills.
 *
 * A function that can fail returns th_err and, when it is not TH_OK, has written a
 * message for a client developer into a struct th_error (which field, which state,
 * which limit). bind/errors.c maps th_err to JSON-RPC codes and HTTP statuses in
 * exactly one table. */
#ifndef TH_UTIL_ERR_H
#define TH_UTIL_ERR_H

#include <stddef.h>

#include "util/ids.h"

typedef enum th_err {
	TH_OK = 0,
	TH_ENOMEM,           /* allocation failed */
	TH_EPARSE,           /* body is not JSON (-32700) */
	TH_EINVALREQ,        /* not a JSON-RPC 2.0 request (-32600) */
	TH_ENOMETHOD,        /* unknown JSON-RPC method (-32601) or REST route (404) */
	TH_EMETHOD,          /* REST route exists, wrong HTTP method (405) */
	TH_EINVAL,           /* invalid params (-32602) */
	TH_ENOTFOUND,        /* TaskNotFound (-32001) */
	TH_ENOTCANCELABLE,   /* TaskNotCancelable (-32002) */
	TH_EPUSHUNSUPPORTED, /* PushNotificationNotSupported (-32003) */
	TH_EUNSUPPORTED,     /* UnsupportedOperation (-32004) */
	TH_ECONTENTTYPE,     /* ContentTypeNotSupported (-32005) */
	TH_EEXTCARD,         /* ExtendedAgentCardNotConfigured (-32007) */
	TH_EEXTREQUIRED,     /* ExtensionSupportRequired (-32008) */
	TH_EVERSION,         /* VersionNotSupported (-32009) */
	TH_ETOOLARGE,        /* request body over the limit (HTTP 413) */
	TH_EBUSY,            /* database stayed busy after every retry */
	TH_EINTERNAL,        /* anything else (-32603) */
	TH_ELENGTH,          /* a body without Content-Length (chunked): HTTP 411 */
	TH_EUNAVAILABLE,     /* at a capacity limit (stream_max): HTTP 503 with Retry-After */
	TH_EFORBIDDEN,       /* a browser-safety refusal (Host, Origin): HTTP 403 (SEC-4) */
	TH_EUNAUTHENTICATED, /* missing or bad credentials: HTTP 401 + WWW-Authenticate (SEC-1) */
	TH_ETOOMANY,         /* a participant over its streams or request rate: HTTP 429
	                        with Retry-After (SEC-3) */
	TH_EGENERATION,      /* TaskGenerationMismatch (-32010, HTTP 409): a 1.1 send's
	                        ifGenerationMatch is not the task's generation (A2A-11-GEN-5) */
	TH_ERR_COUNT         /* not an error: how many there are, for the tables indexed by one
	                        (bind/errors.c, bind/metrics.c) */
} th_err;

#define TH_ERRMSG_MAX 512

struct th_error {
	th_err code;
	char msg[TH_ERRMSG_MAX];
	char task_id[TH_ID_BUF]; /* ErrorInfo metadata.taskId when the error is about a task */
	/* TH_EGENERATION: metadata.expectedGeneration and currentGeneration (the request's
	 * and the task's); has_generations is 0 otherwise (th_error_set clears it). */
	int has_generations;
	long long expected_generation, current_generation;
};

/* Records code and a printf-style message in e (e may be NULL); returns code. Sets every
 * field: task_id becomes empty (call th_error_task after it for an error about a task). */
th_err th_error_set(struct th_error *e, th_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Names the task an error recorded by th_error_set is about (ErrorInfo metadata.taskId);
 * e may be NULL. */
void th_error_task(struct th_error *e, const char *task_id);

/* Clears e to TH_OK with an empty message. */
void th_error_clear(struct th_error *e);

/* A short name for code ("TH_EINVAL"), for logs and tests. */
const char *th_err_name(th_err code);

#endif
