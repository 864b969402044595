/* SPDX-License-Identifier: Apache-2.0 */
/* a2a.h — the A2A 1.0 wire model (ProtoJSON), and nothing else.
 *
 * Decoders take a JSON value as a binding delivered it (JSON-RPC params, or the
 * object bind/rest.c built from path and query), validate it and return either a
 * canonical JSON value (camelCase keys, enum names as strings) or a small C struct.
 * Encoders build the ProtoJSON objects the server sends. Nothing here knows SQL,
 * HTTP or the harness's rules; limits come from the caller. */
#ifndef TH_A2A_A2A_H
#define TH_A2A_A2A_H

#include <json-c/json.h>
#include <stdint.h>

#include "config/settings.h"
#include "util/err.h"
#include "util/idrule.h"

enum th_state {
	TH_STATE_UNSPECIFIED = 0,
	TH_STATE_SUBMITTED = 1,
	TH_STATE_WORKING = 2,
	TH_STATE_COMPLETED = 3,
	TH_STATE_FAILED = 4,
	TH_STATE_CANCELED = 5,
	TH_STATE_INPUT_REQUIRED = 6,
	TH_STATE_REJECTED = 7,
	TH_STATE_AUTH_REQUIRED = 8
};

/* "TASK_STATE_WORKING" etc.; "TASK_STATE_UNSPECIFIED" for anything unknown. */
const char *th_state_name(enum th_state s);
/* Accepts the name or its number (ProtoJSON); returns -1 when v is neither. */
int th_state_from_json(json_object *v);
/* The same for a name or decimal number in text (REST query). */
int th_state_from_text(const char *s);
int th_state_terminal(enum th_state s);    /* COMPLETED FAILED CANCELED REJECTED */
int th_state_interrupted(enum th_state s); /* INPUT_REQUIRED AUTH_REQUIRED */

/* ---- decoding requests ------------------------------------------------ */

/* SEC-3: the string fields that have no configured limit. Every one is kept in memory
 * (and most in the database) past the request, so none may be as long as the body. */
#define TH_A2A_MEDIA_TYPE_MAX 255 /* RFC 6838: 127 + '/' + 127 */
#define TH_A2A_FILENAME_MAX 1024  /* a part's filename */
#define TH_A2A_URL_MAX 8192       /* a part's url, a push config's url */
#define TH_A2A_TS_MAX 64          /* an RFC 3339 timestamp, offsets and fractions included */
#define TH_A2A_MODES_MAX 64       /* acceptedOutputModes entries */

/* Validates a Message sent by a client and returns its canonical form in *out (new
 * reference): messageId (required, non-empty, at most lim->max_id bytes), role
 * (required; "ROLE_USER" or 1 — anything else is refused), parts (required, 1 to
 * lim->max_parts), optional contextId, taskId, metadata (object, at most
 * lim->max_metadata bytes serialised), extensions and referenceTaskIds (arrays of
 * strings). Each part must hold exactly one of text / raw (base64) / url / data, plus
 * optional mediaType, filename, metadata; a text part at most lim->max_text bytes.
 * snake_case names are accepted and rewritten camelCase; empty strings for optional
 * string fields (the JS client sends contextId:"") are dropped. Unknown keys are
 * ignored (A2A 1.0 §5.7). Errors are TH_EINVAL whose message names the field path,
 * e.g. "message.parts[2]: a part needs exactly one of text, raw, url, data". */
th_err th_a2a_message_decode(json_object *in, const struct th_limits *lim, json_object **out,
                             struct th_error *e);

/* params.tenant (any request): absent, null or "" give "" (a static string); otherwise it
 * must pass th_tenant_ok (util/idrule.h, TEN-1), else TH_EINVAL naming the field and the
 * rule. *out is borrowed from params. */
th_err th_a2a_tenant_decode(json_object *params, const char **out, struct th_error *e);

struct th_send_req {
	json_object *message;   /* canonical Message; json_object_put (th_send_req_free) */
	json_object *metadata;  /* request metadata object or NULL; json_object_put */
	int history_length;     /* configuration.historyLength, -1 when absent */
	int return_immediately; /* configuration.returnImmediately */
	json_object *accepted_output_modes; /* array of strings or NULL; json_object_put */
	json_object
	    *push_config; /* configuration.taskPushNotificationConfig or NULL; json_object_put */
	/* Not from params: the binding's Idempotency-Key (A2A-11-IDEM-1), borrowed, NULL when
	 * none; and where the send says it replayed an earlier one (borrowed, may be NULL). */
	const char *idempotency_key;
	int *replayed;
	/* Not from params either: what a 1.1 client's send carries (decision-073), set by
	 * the service. if_generation is configuration.ifGenerationMatch when
	 * has_if_generation (A2A-11-GEN-5); generation (NULL for a 1.0 client) gets the
	 * answer's Task generation (A2A-11-GEN-1). */
	int has_if_generation;
	int64_t if_generation;
	int64_t *generation;
	const char *tenant; /* TEN-1: not from the decoder; service.c sets the binding's
	                       (th_call.tenant), borrowed; NULL or "" = the default tenant */
};
/* params is SendMessageRequest: {message, configuration?, metadata?, tenant?}.
 * configuration may be {} (the JS client always sends it). historyLength < 0 is
 * refused. configuration.taskPushNotificationConfig must be an object; it is kept as
 * sent, and SendMessage decodes it with th_a2a_push_inline_decode where it considers it
 * (after the sender's checks; a control envelope ignores it). */
th_err th_a2a_send_decode(json_object *params, const struct th_limits *lim, struct th_send_req *out,
                          struct th_error *e);
void th_send_req_free(struct th_send_req *r);

struct th_get_req {
	char *id;           /* required; free (th_get_req_free) */
	int history_length; /* -1 when absent */
	/* A2A-11-GEN-4, read for a 1.1 client only (th_a2a_generation_param by the
	 * service): currentGeneration, when has_current_generation. */
	int has_current_generation;
	int64_t current_generation;
	const char *tenant; /* TEN-1: set by service.c as in th_send_req; borrowed */
};
th_err th_a2a_get_decode(json_object *params, struct th_get_req *out, struct th_error *e);

/* ---- A2A 1.1 generation (generation.c, A2A-11-GEN-1..6, decision-073) ---- */

/* A generation named by a request (GetTaskRequest.currentGeneration,
 * SendMessageConfiguration.ifGenerationMatch): a whole number >= 0 as a JSON number or
 * decimal text; TH_EINVAL naming prefix+camel otherwise. *present says whether it was
 * there. */
th_err th_a2a_generation_param(json_object *obj, const char *camel, const char *snake,
                               const char *prefix, int *present, int64_t *out, struct th_error *e);
/* object_json (a Task as JSON text) with "generation":"<gen>" added as its last member
 * (ProtoJSON int64: a decimal string). New string (free), or NULL when out of memory or
 * the text is no JSON object. */
char *th_a2a_with_generation(const char *object_json, int64_t gen);
/* *task (a Task, possibly kept as raw text) replaced by the same Task with its generation
 * gen (th_a2a_with_generation): TH_OK, or TH_ENOMEM with *task as it was. */
th_err th_a2a_task_add_generation(json_object **task, int64_t gen, struct th_error *e);
/* A StreamResponse as JSON text whose one member is a task, statusUpdate or
 * artifactUpdate, with "generation":"<gen>" added to that member. New string (free), or
 * NULL for any other event (a message carries no generation) or when out of memory. */
char *th_a2a_event_with_generation(const char *event_json, int64_t gen);
void th_get_req_free(struct th_get_req *r);

struct th_list_req {
	char *context_id;        /* NULL when absent; th_list_req_free */
	int status;              /* enum th_state, 0 when absent */
	int64_t status_after_ms; /* statusTimestampAfter, -1 when absent */
	int page_size;           /* 1..100, default 50 */
	char *page_token;        /* NULL when absent or ""; th_list_req_free */
	int history_length;      /* -1 when absent */
	int include_artifacts;   /* default 0 */
	int generations;         /* not from params: a 1.1 client's list carries each task's
	                            generation (A2A-11-GEN-1); set by the service */
	const char *tenant;      /* TEN-1: set by service.c as in th_send_req; borrowed */
};
/* Numbers may arrive as JSON numbers or decimal strings, booleans as true/false or
 * "true"/"false" (REST query values). pageSize outside 1..100 → TH_EINVAL naming it. */
th_err th_a2a_list_decode(json_object *params, struct th_list_req *out, struct th_error *e);
void th_list_req_free(struct th_list_req *r);

struct th_cancel_req {
	char *id;              /* required; th_cancel_req_free */
	json_object *metadata; /* or NULL; th_cancel_req_free */
	const char *tenant;    /* TEN-1: set by service.c as in th_send_req; borrowed */
};
/* params may be NULL (REST cancel with an empty body) only if the caller put the
 * path id in; bind always passes an object. */
th_err th_a2a_cancel_decode(json_object *params, struct th_cancel_req *out, struct th_error *e);
void th_cancel_req_free(struct th_cancel_req *r);

/* ---- push notification configs (PUSH-1) ------------------------------------
 *
 * The requests of Create/Get/List/DeleteTaskPushNotificationConfig. Each struct holds a
 * reference to the params object it was decoded from and its strings point into it (a
 * token is never copied); release it with its th_push_*_req_free. A string field that
 * is absent, null or "" is NULL. camelCase and snake_case names are accepted. Errors are
 * TH_EINVAL naming the field and what was sent ("url must be a string, not a number").
 * taskId and id are at most lim->max_id bytes (no cap without lim); id is printable
 * ASCII only. */

struct th_push_create_req {
	json_object *params;     /* held (th_push_create_req_free); the strings point into it */
	const char *task_id;     /* taskId; NULL only in an inline config */
	const char *id;          /* NULL: the server names the config (a UUID) */
	const char *url;         /* required; push/url.c checks it (PUSH-3) */
	const char *token;       /* at most 4096 printable ASCII bytes, or NULL */
	const char *scheme;      /* authentication.scheme, an HTTP auth-scheme token, or NULL */
	const char *credentials; /* authentication.credentials (printable, <= 4096), or NULL */
	const char *tenant;      /* TEN-1: set by service.c as in th_send_req; borrowed */
};
/* params is the flat A2A 1.0 config {taskId, id?, url, token?, authentication?:
 * {scheme, credentials?}}; taskId and url are required, and a 0.3-style nested
 * pushNotificationConfig is refused with a message saying so. */
th_err th_a2a_push_create_decode(json_object *params, const struct th_limits *lim,
                                 struct th_push_create_req *out, struct th_error *e);
/* The same for SendMessage's configuration.taskPushNotificationConfig, whose taskId may
 * be empty (it belongs to the message's task). */
th_err th_a2a_push_inline_decode(json_object *config, const struct th_limits *lim,
                                 struct th_push_create_req *out, struct th_error *e);
void th_push_create_req_free(struct th_push_create_req *r);

/* GetTaskPushNotificationConfig and DeleteTaskPushNotificationConfig (the same shape,
 * as GetTask and SubscribeToTask share th_get_req): {taskId, id}, both required. */
struct th_push_get_req {
	json_object *params; /* held (th_push_get_req_free); the strings point into it */
	const char *task_id;
	const char *id;
	const char *tenant; /* TEN-1: set by service.c as in th_send_req; borrowed */
};
th_err th_a2a_push_get_decode(json_object *params, const struct th_limits *lim,
                              struct th_push_get_req *out, struct th_error *e);
void th_push_get_req_free(struct th_push_get_req *r);

/* ListTaskPushNotificationConfigs: {taskId, pageSize?, pageToken?}. pageSize is a whole
 * number 0..100 as a JSON number or decimal text (REST query), 0 or absent meaning 50;
 * pageToken is at most 64 bytes (the harness checks it is one it issued). */
struct th_push_list_req {
	json_object *params; /* held (th_push_list_req_free); the strings point into it */
	const char *task_id;
	int page_size;          /* 1..100 */
	const char *page_token; /* NULL when absent or "" */
	const char *tenant;     /* TEN-1: set by service.c as in th_send_req; borrowed */
};
th_err th_a2a_push_list_decode(json_object *params, const struct th_limits *lim,
                               struct th_push_list_req *out, struct th_error *e);
void th_push_list_req_free(struct th_push_list_req *r);

/* The dead letters of the caller's push configs (RET-4, decision-076; not an A2A method,
 * its query read as ListTaskPushNotificationConfigs' is): {pageSize?, pageToken?}, with the
 * same rules as there. */
struct th_dead_letters_req {
	json_object *params;    /* held (th_dead_letters_req_free); the strings point into it */
	int page_size;          /* 1..100 */
	const char *page_token; /* NULL when absent or "" */
	const char *tenant;     /* TEN-1: set by service.c as in th_send_req; borrowed */
};
th_err th_a2a_dead_letters_decode(json_object *params, struct th_dead_letters_req *out,
                                  struct th_error *e);
void th_dead_letters_req_free(struct th_dead_letters_req *r);

/* ---- building responses ------------------------------------------------ */

/* A text part {"text": text}. */
json_object *th_a2a_text_part(const char *text);
/* A data part {"data": value, "mediaType": media_type}; takes ownership of value. */
json_object *th_a2a_data_part(json_object *value, const char *media_type);

/* An agent Message: {messageId (new UUID), contextId, taskId, role: ROLE_AGENT, parts,
 * metadata?}; a NULL or "" taskId is omitted (no task yet). Takes ownership of parts (an
 * array; NULL gives []) and metadata (object or NULL). */
json_object *th_a2a_agent_message(const char *context_id, const char *task_id, json_object *parts,
                                  json_object *metadata);

/* TaskStatus {state, message?, timestamp}; takes ownership of message (may be NULL).
 * ts_ms < 0 omits timestamp (a status whose time is unknown). */
json_object *th_a2a_status(enum th_state state, json_object *message, int64_t ts_ms);

/* Task {id, contextId, status, artifacts?, history?, metadata?}; takes ownership of
 * status, history, artifacts, metadata (each but status may be NULL = key omitted; an
 * empty history or artifacts array is omitted too, as ProtoJSON omits empty lists). */
json_object *th_a2a_task(const char *id, const char *context_id, json_object *status,
                         json_object *history, json_object *artifacts, json_object *metadata);

/* StreamResponse members: these return the event itself (TaskStatusUpdateEvent,
 * TaskArtifactUpdateEvent); th_a2a_stream_response wraps one as {"statusUpdate": …}.
 * Each takes ownership of its JSON arguments; metadata may be NULL (omitted); append and
 * lastChunk appear only when true (proto3 omits default booleans). */
json_object *th_a2a_status_update(const char *task_id, const char *context_id, json_object *status,
                                  json_object *metadata);
json_object *th_a2a_artifact_update(const char *task_id, const char *context_id,
                                    json_object *artifact, int append, int last_chunk);

/* A StreamResponse {member: value}, member one of "task", "message", "statusUpdate",
 * "artifactUpdate"; takes ownership of value. */
json_object *th_a2a_stream_response(const char *member, json_object *value);

/* {"nextPageToken", "pageSize", "totalSize", "tasks"}; takes ownership of tasks (NULL
 * gives []); a NULL token is emitted as "" (the spec requires the key on every page). */
json_object *th_a2a_list_response(json_object *tasks, const char *next_page_token, int page_size,
                                  int total_size);

/* Keeps only the last n entries of the array history (n < 0: all; n == 0: none).
 * Builders return NULL when memory runs out, having released what they owned. */
void th_a2a_trim_history(json_object *history, int n);

#endif
