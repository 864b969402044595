/* SPDX-License-Identifier: Apache-2.0 */
/* channel.h — channels between a task's participants (CH-1..CH-3) and help requests
 * and replies (CH-4, CH-5). A channel message is stored (channel_messages and the
 * task's history) and delivered as a message event before anything else happens; it
 * starts no turn. A reply to the harness's own question resumes the task. */
#ifndef TH_DOMAIN_CHANNEL_H
#define TH_DOMAIN_CHANNEL_H

#include <json-c/json.h>
#include <stdint.h>

#include "config/settings.h"
#include "store/store.h"
#include "util/err.h"

/* A validated channel part (CH-1). Strings are borrowed from the message. */
struct th_chan_part {
	json_object *value; /* the part's data object */
	const char *channel_id;
	const char *kind;        /* "message" | "help_request" | "help_reply" */
	const char *text;        /* "" when absent */
	const char *in_reply_to; /* or NULL */
	json_object *to;         /* array of participant ids or NULL */
};

/* Reads v, the data of part i of a message (a part of TH_MT_CHANNEL, found by
 * th_inbound_read), into out (borrowing from v). 0 valid, -1 invalid (e set): not an
 * object, an unknown key, a wrong type, a sender other than the request's sender, a
 * help_reply without in_reply_to, a 'to' longer than lim->max_participants or with an id
 * that breaks the id rule (ID-6). */
int th_channel_part_read(json_object *v, size_t i, const char *sender, const struct th_limits *lim,
                         struct th_chan_part *out, struct th_error *e);

/* What accepting a message did. */
struct th_chan_outcome {
	int resume; /* it answered the harness's own question: the task resumes with a turn */
};

/* Accepts a channel message from sender on the task in row, inside the caller's
 * transaction: membership (one refusal text, CH-2), opening a side channel with `to`,
 * help requests between participants, help replies (CH-5). msg is the canonical
 * message (already stamped with the sender) and is appended to history and announced
 * as a message event here. */
th_err th_channel_accept(struct th_store *st, struct th_task_row *row, const char *sender,
                         json_object *msg, const struct th_chan_part *cp,
                         struct th_chan_outcome *out, struct th_error *e);

/* A plain-text message from a participant with a pending question from the harness
 * answers the oldest such question (CH-5, decision-019), whatever the task's sub-state;
 * stores it as the reply. *answered = 1 when it did. */
th_err th_channel_answer_pending(struct th_store *st, struct th_task_row *row, const char *sender,
                                 json_object *msg, int *answered, struct th_error *e);

/* Stores msg in history and appends its {"message": …} event, on the task channel or
 * (channel_id not the task id) a side channel whose subscribers alone see it. */
th_err th_channel_deliver(struct th_store *st, const struct th_task_row *row, const char *sender,
                          const char *channel_id, json_object *msg, struct th_error *e);

/* Appends one row to channel_messages (no history, no event): kind is "message",
 * "help_request" or "help_reply"; value is the channel part's object. */
th_err th_channel_record(struct th_store *st, const struct th_task_row *row, const char *sender,
                         const char *channel_id, const char *kind, const char *text,
                         const char *in_reply_to, json_object *value, const char *message_id,
                         struct th_error *e);

/* The harness asks a participant (CH-4, /ask): stores the help request and its channel
 * message. asked_for is the participant who typed /ask (NULL when the model asks).
 * *request_id (caller frees) names it; *part is the help_request channel part for the
 * status message (new reference). */
th_err th_channel_ask(struct th_store *st, const struct th_task_row *row, const char *asked,
                      const char *asked_for, const char *question, char **request_id,
                      json_object **part, struct th_error *e);

#endif
