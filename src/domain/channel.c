/* SPDX-License-Identifier: Apache-2.0 */
#include "domain/channel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a2a/a2a.h"
#include "domain/events.h"
#include "domain/ext.h"
#include "domain/access.h"
#include "domain/status.h"
#include "util/ids.h"
#include "util/jsonx.h"
#include "util/idrule.h"

/* CH-2: the same words whether the channel does not exist or the sender is not in it,
 * whatever the message was (decision-042); they depend only on what the sender sent. */
static th_err not_open(const char *channel_id, const char *sender, struct th_error *e)
{
	return th_error_set(e, TH_EINVAL,
	                    "channel %.100s is not open to you (a side channel you open is "
	                    "named %.100s/NAME)",
	                    channel_id, sender);
}

/* CH-2, decision-042: a side channel is opened only under an id of the opener's own,
 * "<opener>/NAME" with no slash in NAME, so that whether an id is taken is only ever
 * news to the one participant who could have taken it. */
static int owns_channel_id(const char *channel_id, const char *sender)
{
	const char *slash = strrchr(channel_id, '/');
	size_t n = strlen(sender);
	return slash != NULL && slash[1] != '\0' && (size_t)(slash - channel_id) == n &&
	       strncmp(channel_id, sender, n) == 0;
}

/* CH-1: a channel part's data has only the keys docs/a2a/ext/channel.json names, each
 * of its type; 0, or -1 with e naming the key (part i of the message). */
static int check_keys(json_object *v, size_t i, struct th_error *e)
{
	json_object_object_foreach(v, key, val)
	{
		static const char *const keys[] = {"channel_id", "sender",      "kind", "text",
		                                   "parts",      "in_reply_to", "to",   NULL};
		int ok = 0;
		for (size_t k = 0; keys[k] != NULL; k++)
			ok |= strcmp(key, keys[k]) == 0;
		if (!ok) {
			th_error_set(e, TH_EINVAL,
			             "message.parts[%zu].data: unknown channel key '%.60s' (see "
			             "docs/a2a/ext/channel.json)",
			             i, key);
			return -1;
		}
		if ((strcmp(key, "parts") == 0 || strcmp(key, "to") == 0) &&
		    !json_object_is_type(val, json_type_array)) {
			th_error_set(e, TH_EINVAL, "message.parts[%zu].data.%s must be an array", i,
			             key);
			return -1;
		}
		if (strcmp(key, "in_reply_to") == 0 && val == NULL)
			continue;
		if (strcmp(key, "parts") != 0 && strcmp(key, "to") != 0 &&
		    !json_object_is_type(val, json_type_string)) {
			th_error_set(e, TH_EINVAL, "message.parts[%zu].data.%s must be a string", i,
			             key);
			return -1;
		}
	}
	return 0;
}

/* The channel part's fields into out (borrowed from v): channel, sender (the one
 * X-Participant-Id asserted), kind, text, in_reply_to (a help_reply's request) and the
 * addressees (at most a task's participants, each a valid id); 0 or -1 with e. */
static int read_part(json_object *v, size_t i, const char *sender, const struct th_limits *lim,
                     struct th_chan_part *out, struct th_error *e)
{
	out->value = v;
	out->channel_id = th_json_str(v, "channel_id");
	const char *snd = th_json_str(v, "sender");
	out->kind = th_json_str(v, "kind") ? th_json_str(v, "kind") : "message";
	out->text = th_json_str(v, "text") ? th_json_str(v, "text") : "";
	out->in_reply_to = th_json_str(v, "in_reply_to");
	out->to = json_object_object_get(v, "to");
	if (out->channel_id == NULL || *out->channel_id == '\0') {
		th_error_set(e, TH_EINVAL, "message.parts[%zu].data.channel_id is required", i);
		return -1;
	}
	if (snd == NULL || strcmp(snd, sender) != 0) {
		th_error_set(e, TH_EINVAL,
		             "message.parts[%zu].data.sender must be the sender asserted by "
		             "X-Participant-Id (%.100s)",
		             i, sender);
		return -1;
	}
	if (strcmp(out->kind, "message") && strcmp(out->kind, "help_request") &&
	    strcmp(out->kind, "help_reply")) {
		th_error_set(e, TH_EINVAL,
		             "message.parts[%zu].data.kind '%.60s' is not message, help_request or "
		             "help_reply",
		             i, out->kind);
		return -1;
	}
	if (strcmp(out->kind, "help_reply") == 0 &&
	    (out->in_reply_to == NULL || *out->in_reply_to == '\0')) {
		th_error_set(e, TH_EINVAL,
		             "message.parts[%zu].data.in_reply_to is required in a help_reply (the "
		             "help request's id)",
		             i);
		return -1;
	}
	size_t nto = out->to != NULL ? json_object_array_length(out->to) : 0;
	if (nto > lim->max_participants) {
		th_error_set(e, TH_EINVAL,
		             "message.parts[%zu].data.to has %zu entries; a task has at most "
		             "%zu participants",
		             i, nto, lim->max_participants);
		return -1;
	}
	for (size_t k = 0; k < nto; k++) {
		json_object *t = json_object_array_get_idx(out->to, k);
		char path[96];
		snprintf(path, sizeof path, "message.parts[%zu].data.to[%zu]", i, k);
		if (!json_object_is_type(t, json_type_string)) {
			th_error_set(e, TH_EINVAL, "%s must be a participant id", path);
			return -1;
		}
		if (th_id_check(json_object_get_string(t), (size_t)json_object_get_string_len(t),
		                lim->max_id, path, e) != TH_OK)
			return -1;
	}
	return 0;
}

int th_channel_part_read(json_object *v, size_t i, const char *sender, const struct th_limits *lim,
                         struct th_chan_part *out, struct th_error *e)
{
	memset(out, 0, sizeof *out);
	if (!json_object_is_type(v, json_type_object)) {
		th_error_set(e, TH_EINVAL,
		             "message.parts[%zu].data: a channel message must be an object", i);
		return -1;
	}
	return check_keys(v, i, e) != 0 || read_part(v, i, sender, lim, out, e) != 0 ? -1 : 0;
}

th_err th_channel_deliver(struct th_store *st, const struct th_task_row *row, const char *sender,
                          const char *channel_id, json_object *msg, struct th_error *e)
{
	const char *mid = th_json_str(msg, "messageId");
	const char *role = strcmp(sender, TH_AGENT_ID) == 0 ? "ROLE_AGENT" : "ROLE_USER";
	th_err rc = th_store_message_append(st, row->id, mid, role, sender, msg, e);
	if (rc != TH_OK)
		return rc;
	json_object *ev = json_object_new_object();
	if (th_json_put(ev, "message", json_object_get(msg)) != 0) {
		json_object_put(ev);
		return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	int side = channel_id != NULL && strcmp(channel_id, row->id) != 0;
	rc = th_event_record(st, row->id, "message", side ? channel_id : NULL, ev, e);
	json_object_put(ev);
	return rc;
}

th_err th_channel_record(struct th_store *st, const struct th_task_row *row, const char *sender,
                         const char *channel_id, const char *kind, const char *text,
                         const char *in_reply_to, json_object *value, const char *message_id,
                         struct th_error *e)
{
	static const struct {
		const char *name;
		int kind;
	} kinds[] = {{"message", TH_CHAN_MESSAGE},
	             {"help_request", TH_CHAN_HELP_REQUEST},
	             {"help_reply", TH_CHAN_HELP_REPLY}};
	struct th_channel_msg_in m = {.channel_id = channel_id,
	                              .message_id = message_id,
	                              .sender = sender,
	                              .kind = TH_CHAN_MESSAGE,
	                              .text = text,
	                              .json = th_json_text(value),
	                              .in_reply_to = in_reply_to};
	for (size_t i = 0; i < 3; i++)
		if (strcmp(kinds[i].name, kind) == 0)
			m.kind = kinds[i].kind;
	return th_store_channel_append(st, row->id, &m, NULL, e);
}

/* CH-1: a first message to a channel that does not exist yet, addressed to some of the
 * task's participants, opens it with the sender and them as members. */
static th_err open_channel(struct th_store *st, const struct th_task_row *row, const char *sender,
                           const struct th_chan_part *cp, struct th_error *e)
{
	size_t n = json_object_array_length(cp->to);
	const char **members = calloc(n, sizeof *members);
	if (members == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		members[i] = json_object_get_string(json_object_array_get_idx(cp->to, i));
	th_err rc = th_store_channel_create(st, row->id, cp->channel_id, sender, members, n, e);
	free(members);
	if (rc == TH_EINVAL)
		rc = th_error_set(e, TH_EINVAL,
		                  "channel %.100s cannot be opened: every id in 'to' must be a "
		                  "participant of the task",
		                  cp->channel_id);
	return rc;
}

/* CH-4: a participant asks others for help; one participant per request. */
static th_err ask_for_help(struct th_store *st, const struct th_task_row *row, const char *sender,
                           const struct th_chan_part *cp, struct th_error *e)
{
	if (cp->to == NULL || json_object_array_length(cp->to) != 1)
		return th_error_set(e, TH_EINVAL,
		                    "a help_request names exactly one participant in 'to'");
	const char *asked = json_object_get_string(json_object_array_get_idx(cp->to, 0));
	char *role = NULL;
	if (th_store_participant_role(st, row->id, asked, &role, e) != TH_OK)
		return th_error_set(e, TH_EINVAL,
		                    "help_request: %.100s is not a participant of the task", asked);
	free(role);
	char id[TH_UUID_LEN + 1];
	th_uuid(id);
	struct th_help_request_in h = {.id = id,
	                               .task_id = row->id,
	                               .channel_id = cp->channel_id,
	                               .asked_by = sender,
	                               .asked = asked,
	                               .question = cp->text};
	return th_store_help_create(st, &h, e);
}

/* CH-4: the one asked answers a help request with message mid. *resume = 1 when it was
 * the harness's own question, which is what the task waits for. */
static th_err reply_to_help(struct th_store *st, const struct th_task_row *row, const char *sender,
                            const struct th_chan_part *cp, const char *mid, int *resume,
                            struct th_error *e)
{
	struct th_help_request h = {0};
	th_err rc = th_store_help_get(st, row->id, cp->in_reply_to, &h, e);
	if (rc == TH_ENOTFOUND)
		rc = th_error_set(e, TH_EINVAL,
		                  "help_reply: there is no help request %.100s on this task",
		                  cp->in_reply_to);
	else if (rc == TH_OK && strcmp(h.asked, sender) != 0)
		rc = th_error_set(e, TH_EINVAL,
		                  "help_reply: help request %.100s asked %.100s, not %.100s",
		                  cp->in_reply_to, h.asked, sender);
	else if (rc == TH_OK &&
	         (rc = th_store_help_answer(st, row->id, h.id, mid, NULL, e)) == TH_EINVAL)
		rc = th_error_set(e, TH_EINVAL, "help_reply: help request %.100s was already %s",
		                  cp->in_reply_to,
		                  h.state == TH_HELP_CANCELED ? "canceled" : "answered");
	if (rc == TH_OK)
		*resume = strcmp(h.asked_by, TH_AGENT_ID) == 0;
	th_help_request_free(&h);
	return rc;
}

th_err th_channel_accept(struct th_store *st, struct th_task_row *row, const char *sender,
                         json_object *msg, const struct th_chan_part *cp,
                         struct th_chan_outcome *out, struct th_error *e)
{
	out->resume = 0;
	const char *mid = th_json_str(msg, "messageId");
	int exists = 0, member = 0;
	th_err rc =
	    th_store_channel_is_member(st, row->id, cp->channel_id, sender, &exists, &member, e);
	if (rc != TH_OK)
		return rc;
	/* Every answer to a sender outside the channel is decided before anything about the
	 * channel is looked at further: one text for a channel that exists and one that
	 * does not (CH-2). */
	if (!exists && strcmp(cp->kind, "message") == 0 && cp->to != NULL &&
	    json_object_array_length(cp->to) > 0 && owns_channel_id(cp->channel_id, sender)) {
		if ((rc = open_channel(st, row, sender, cp, e)) != TH_OK)
			return rc;
		member = 1;
	}
	if (!member)
		return not_open(cp->channel_id, sender, e);
	if (strcmp(cp->kind, "help_request") == 0)
		rc = ask_for_help(st, row, sender, cp, e);
	else if (strcmp(cp->kind, "help_reply") == 0)
		rc = reply_to_help(st, row, sender, cp, mid, &out->resume, e);
	if (rc == TH_OK)
		rc = th_channel_record(st, row, sender, cp->channel_id, cp->kind, cp->text,
		                       cp->in_reply_to, cp->value, mid, e);
	if (rc == TH_OK)
		rc = th_channel_deliver(st, row, sender, cp->channel_id, msg, e);
	return rc;
}

th_err th_channel_answer_pending(struct th_store *st, struct th_task_row *row, const char *sender,
                                 json_object *msg, int *answered, struct th_error *e)
{
	*answered = 0;
	/* decision-019: a question the harness asked stays answerable by plain text from the
	 * one asked for as long as it is pending, whatever the task's sub-state says now (a
	 * refused completion parks the task awaiting-next-message, CTL-4, without closing
	 * it). The oldest pending question to the sender is the one answered. */
	struct th_help_request h = {0};
	th_err rc = th_store_help_pending_for(st, row->id, TH_AGENT_ID, sender, &h, e);
	if (rc == TH_ENOTFOUND) {
		th_error_clear(e);
		return TH_OK;
	}
	if (rc == TH_OK) {
		const char *mid = th_json_str(msg, "messageId");
		rc = th_store_help_answer(st, row->id, h.id, mid, NULL, e);
		json_object *value = json_object_new_object();
		if (th_json_put(value, "in_reply_to", json_object_new_string(h.id)) != 0 &&
		    rc == TH_OK)
			rc = th_error_set(e, TH_ENOMEM, "out of memory building a help reply");
		if (rc == TH_OK)
			rc = th_channel_record(st, row, sender, h.channel_id, "help_reply", "",
			                       h.id, value, mid, e);
		json_object_put(value);
		*answered = rc == TH_OK;
	}
	th_help_request_free(&h);
	return rc;
}

th_err th_channel_ask(struct th_store *st, const struct th_task_row *row, const char *asked,
                      const char *asked_for, const char *question, char **request_id,
                      json_object **part, struct th_error *e)
{
	*request_id = NULL;
	*part = NULL;
	char id[TH_UUID_LEN + 1], mid[TH_UUID_LEN + 1];
	th_uuid(id);
	th_uuid(mid);
	struct th_help_request_in h = {.id = id,
	                               .task_id = row->id,
	                               .channel_id = row->id,
	                               .asked_by = TH_AGENT_ID,
	                               .asked = asked,
	                               .asked_for = asked_for,
	                               .question = question};
	th_err rc = th_store_help_create(st, &h, e);
	json_object *value = json_object_new_object();
	json_object *to = json_object_new_array();
	if (value == NULL || to == NULL) {
		json_object_put(value);
		json_object_put(to);
		return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	int bad = th_json_push(to, json_object_new_string(asked));
	bad |= th_json_put(value, "channel_id", json_object_new_string(row->id));
	bad |= th_json_put(value, "sender", json_object_new_string(TH_AGENT_ID));
	bad |= th_json_put(value, "kind", json_object_new_string("help_request"));
	bad |= th_json_put(value, "text", json_object_new_string(question));
	bad |= th_json_put(value, "to", to);
	if (rc == TH_OK && bad)
		rc = th_error_set(e, TH_ENOMEM, "out of memory building a help request");
	if (rc == TH_OK)
		rc = th_channel_record(st, row, TH_AGENT_ID, row->id, "help_request", question,
		                       NULL, value, mid, e);
	if (rc != TH_OK) {
		json_object_put(value);
		return rc;
	}
	*part = th_a2a_data_part(value, TH_MT_CHANNEL);
	*request_id = strdup(id);
	if (*part == NULL || *request_id == NULL) {
		json_object_put(*part);
		free(*request_id);
		*part = NULL;
		*request_id = NULL;
		return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	return TH_OK;
}
