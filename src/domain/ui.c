/* SPDX-License-Identifier: Apache-2.0 */
#include "domain/ui.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "a2a/a2a.h"
#include "a2ui/a2ui.h"
#include "config/settings.h"
#include "domain/channel.h"
#include "domain/events.h"
#include "domain/ext.h"
#include "domain/access.h"
#include "util/ids.h"
#include "util/jsonx.h"

/* The task's registry (new reference), or NULL with *exists = 0 when it has none. */
static th_err load_registry(struct th_store *st, const char *task_id, json_object **reg,
                            int *exists, struct th_error *e)
{
	char *text = NULL;
	*reg = NULL;
	th_err rc = th_store_a2ui_get(st, task_id, &text, e);
	if (rc != TH_OK)
		return rc;
	*exists = text != NULL;
	*reg = text ? json_tokener_parse(text) : json_object_new_object();
	free(text);
	if (*reg == NULL)
		return th_error_set(e, TH_EINTERNAL, "the A2UI registry of task %.100s is not JSON",
		                    task_id);
	return TH_OK;
}

th_err th_ui_note_client(struct th_store *st, const char *task_id, unsigned extensions,
                         json_object *msg, struct th_error *e)
{
	json_object *meta = json_object_object_get(msg, "metadata");
	th_err rc = th_a2ui_check_capabilities(meta, e);
	if (rc != TH_OK || !th_a2ui_client_supports(meta, (extensions & TH_EXT_A2UI) != 0))
		return rc;
	char *text = NULL;
	if ((rc = th_store_a2ui_get(st, task_id, &text, e)) != TH_OK)
		return rc;
	if (text == NULL)
		rc = th_store_a2ui_put(st, task_id, "{}", e);
	free(text);
	return rc;
}

th_err th_ui_check_inbound(struct th_store *st, const char *task_id, json_object *msg, int *actions,
                           int *reports, struct th_error *e)
{
	*actions = 0;
	*reports = 0;
	json_object *parts = json_object_object_get(msg, "parts"), *reg = NULL;
	int exists = 0;
	th_err rc = TH_OK;
	for (size_t i = 0; rc == TH_OK && i < json_object_array_length(parts); i++) {
		json_object *p = json_object_array_get_idx(parts, i), *msgs = NULL;
		if (!th_a2ui_is_part(p))
			continue;
		if (reg == NULL && task_id == NULL && (reg = json_object_new_object()) == NULL)
			rc = th_error_set(e, TH_ENOMEM, "out of memory");
		if (reg == NULL && rc == TH_OK)
			rc = load_registry(st, task_id, &reg, &exists, e);
		if (rc != TH_OK)
			break;
		if ((rc = th_a2ui_parse_client(p, &msgs, e)) != TH_OK)
			break;
		for (size_t k = 0; rc == TH_OK && k < json_object_array_length(msgs); k++) {
			json_object *m = json_object_array_get_idx(msgs, k);
			if (json_object_object_get(m, "action") == NULL) {
				(*reports)++; /* a client error report: recorded, not acted on
				                 (UI-2) */
				continue;
			}
			if ((rc = th_a2ui_check_action(reg, m, e)) == TH_OK)
				(*actions)++;
		}
		json_object_put(msgs);
	}
	json_object_put(reg);
	return rc;
}

static const char *version_of(const struct th_config *cfg)
{
	return cfg->a2ui_v091 ? TH_A2UI_VERSION_091 : TH_A2UI_VERSION;
}

th_err th_ui_emit(struct th_store *st, const struct th_config *cfg, const struct th_task_row *row,
                  json_object *messages, char **artifact_id, struct th_error *e)
{
	*artifact_id = NULL;
	json_object *reg = NULL;
	int exists = 0;
	th_err rc = load_registry(st, row->id, &reg, &exists, e);
	struct th_a2ui_opts opts = {.version = version_of(cfg), .fill_version = 1};
	int64_t n = 0;
	json_object *artifact = NULL, *ev = NULL;
	if (rc == TH_OK)
		rc = th_a2ui_apply(reg, messages, &opts, e);
	if (rc == TH_OK)
		rc = th_store_a2ui_put(st, row->id, th_json_text(reg), e);
	if (rc == TH_OK)
		rc = th_store_a2ui_next_artifact(st, row->id, &n, e);
	if (rc == TH_OK && (artifact = th_a2ui_artifact(n, messages)) == NULL)
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	if (rc == TH_OK)
		rc = th_store_artifact_put(st, row->id, th_json_str(artifact, "artifactId"),
		                           th_json_text(artifact), e);
	if (rc == TH_OK) {
		*artifact_id = strdup(th_json_str(artifact, "artifactId"));
		ev = json_object_new_object();
		json_object *upd = th_a2a_artifact_update(row->id, row->context_id,
		                                          json_object_get(artifact), 0, 1);
		if (th_json_put(ev, "artifactUpdate", upd) != 0 || *artifact_id == NULL)
			rc = th_error_set(e, TH_ENOMEM, "out of memory");
		else
			rc = th_event_record(st, row->id, "artifact", NULL, ev, e);
	}
	json_object_put(ev);
	json_object_put(artifact);
	json_object_put(reg);
	return rc;
}

th_err th_ui_renders(struct th_store *st, const char *task_id, int *renders, struct th_error *e)
{
	char *text = NULL;
	th_err rc = th_store_a2ui_get(st, task_id, &text, e);
	*renders = text != NULL;
	free(text);
	return rc;
}

th_err th_ui_confirm(struct th_store *st, const struct th_config *cfg, struct th_task_row *row,
                     const char *sender, const char *question, struct th_cmd_result *res,
                     struct th_error *e)
{
	int renders = 0;
	th_err rc = th_ui_renders(st, row->id, &renders, e);
	if (rc != TH_OK)
		return rc;
	char id[TH_UUID_LEN + 1], surface[64];
	th_uuid(id);
	if (!renders) {
		/* EXT-4: no A2UI on the client side; the same question in words. */
		rc = th_store_confirm_create(st, row->id, id, NULL, question, sender, e);
		if (rc == TH_OK)
			th_buf_printf(&res->text, "Please answer approve or reject: %s", question);
		return rc;
	}
	/* The id's last 12 digits are random; its first ones are the time (decision-028), which
	 * two tasks' cards made within a minute share. */
	snprintf(surface, sizeof surface, "confirm-%s", id + TH_UUID_LEN - 12);
	json_object *msgs = th_a2ui_confirm_surface(surface, question, version_of(cfg));
	char *artifact = NULL;
	if (msgs == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	rc = th_ui_emit(st, cfg, row, msgs, &artifact, e);
	if (rc == TH_OK)
		rc = th_store_confirm_create(st, row->id, id, surface, question, sender, e);
	if (rc == TH_OK)
		th_buf_printf(&res->text, "Approve or reject: %s (the card is artifact %s)",
		              question, artifact);
	free(artifact);
	json_object_put(msgs);
	return rc;
}

/* The first A2UI action in msg (borrowed inside *holder, which the caller puts). */
static json_object *first_action(json_object *msg, json_object **holder)
{
	*holder = NULL;
	json_object *parts = json_object_object_get(msg, "parts");
	for (size_t i = 0; i < json_object_array_length(parts); i++) {
		json_object *p = json_object_array_get_idx(parts, i), *msgs = NULL;
		if (!th_a2ui_is_part(p) || th_a2ui_parse_client(p, &msgs, NULL) != TH_OK)
			continue;
		for (size_t k = 0; k < json_object_array_length(msgs); k++) {
			json_object *a =
			    json_object_object_get(json_object_array_get_idx(msgs, k), "action");
			if (a != NULL) {
				*holder = msgs;
				return a;
			}
		}
		json_object_put(msgs);
	}
	return NULL;
}

/* "approve" / "reject" typed alone (case and surrounding space ignored): 1 / 0; -1. */
static int typed_decision(const struct th_inbound *in)
{
	const char *t = in->nparts == 1 ? in->text : NULL;
	if (t == NULL)
		return -1;
	while (isspace((unsigned char)*t))
		t++;
	size_t n = strlen(t);
	while (n > 0 && isspace((unsigned char)t[n - 1]))
		n--;
	if (n == 7 && strncasecmp(t, "approve", 7) == 0)
		return 1;
	if (n == 6 && strncasecmp(t, "reject", 6) == 0)
		return 0;
	return -1;
}

/* SEC-5: who may decide a confirmation: a participant who may change the task, never a
 * watcher (ID-4) nor a stranger. */
static int may_decide(struct th_store *st, const char *task_id, const char *who)
{
	char *role = NULL;
	struct th_error e;
	th_error_clear(&e);
	int yes = who != NULL && th_store_participant_role(st, task_id, who, &role, &e) == TH_OK &&
	          role != NULL && strcmp(role, "watcher") != 0;
	free(role);
	return yes;
}

/* The pending confirmation msg answers, and the decision (1 approve, 0 reject). A
 * watcher's words or clicks answer nothing (SEC-5). */
static th_err answered(struct th_store *st, const char *task_id, json_object *msg,
                       const struct th_inbound *in, struct th_confirm *c, int *approve,
                       struct th_error *e)
{
	const char *who = th_json_str(json_object_object_get(msg, "metadata"), "participant_id");
	if (!may_decide(st, task_id, who))
		return th_error_set(e, TH_ENOTFOUND, "not a decision: a watcher does not decide");
	json_object *holder = NULL;
	json_object *action = in->a2ui > 0 ? first_action(msg, &holder) : NULL;
	th_err rc;
	if (action != NULL) {
		const char *name = th_json_str(action, "name");
		*approve = name != NULL && strcmp(name, TH_A2UI_CONFIRM_APPROVE) == 0;
		rc = th_store_confirm_pending(st, task_id, th_json_str(action, "surfaceId"), c, e);
	} else if ((*approve = typed_decision(in)) >= 0) {
		rc = th_store_confirm_pending(st, task_id, NULL, c, e);
	} else {
		rc = th_error_set(e, TH_ENOTFOUND, "not a decision");
	}
	json_object_put(holder);
	return rc;
}

int th_ui_is_decision(struct th_store *st, const char *task_id, json_object *msg,
                      const struct th_inbound *in)
{
	struct th_confirm c = {0};
	int approve = 0;
	int yes = answered(st, task_id, msg, in, &c, &approve, NULL) == TH_OK;
	th_confirm_free(&c);
	return yes;
}

th_err th_ui_decide(struct th_store *st, const struct th_config *cfg, struct th_task_row *row,
                    const char *sender, json_object *msg, const struct th_inbound *in,
                    struct th_cmd_result *res, struct th_error *e)
{
	struct th_confirm c = {0};
	int approve = 0;
	if (!may_decide(st, row->id, sender)) {
		/* Made a watcher since the turn began: the question stays pending. */
		th_buf_printf(&res->text, "%s is a watcher here; a watcher does not decide.",
		              sender);
		return TH_OK;
	}
	th_err rc = answered(st, row->id, msg, in, &c, &approve, e);
	if (rc == TH_ENOTFOUND) {
		/* Decided in another worker between the turn's start and now. */
		th_error_clear(e);
		th_buf_puts(&res->text, "That question was decided already.");
		return TH_OK;
	}
	if (rc == TH_OK)
		rc = th_store_confirm_decide(st, row->id, c.id, approve, sender, e);
	if (rc != TH_OK) {
		th_confirm_free(&c);
		return rc;
	}
	th_buf_printf(&res->text, "%s %s: %s", sender, approve ? "approved" : "rejected",
	              c.question);
	/* The decision is a channel message on the task channel (UI-4), carried by the reply. */
	json_object *value = json_object_new_object();
	int bad = th_json_put(value, "channel_id", json_object_new_string(row->id));
	bad |= th_json_put(value, "sender", json_object_new_string(TH_AGENT_ID));
	bad |= th_json_put(value, "kind", json_object_new_string("message"));
	bad |= th_json_put(value, "text", json_object_new_string(res->text.data));
	if (bad) {
		json_object_put(value);
		th_confirm_free(&c);
		return th_error_set(e, TH_ENOMEM, "out of memory building a decision message");
	}
	char mid[TH_UUID_LEN + 1];
	th_uuid(mid);
	rc = th_channel_record(st, row, TH_AGENT_ID, row->id, "message", res->text.data, NULL,
	                       value, mid, e);
	res->parts = json_object_new_array();
	if (th_json_push(res->parts, th_a2a_data_part(value, TH_MT_CHANNEL)) != 0 && rc == TH_OK)
		rc = th_error_set(e, TH_ENOMEM, "out of memory building a decision message");
	/* The Card has done its job: delete it, so a second click is refused (UI-2). */
	if (rc == TH_OK && c.surface_id != NULL) {
		json_object *del = json_object_new_array(), *m = json_object_new_object(),
		            *body = json_object_new_object();
		bad = th_json_put(body, "surfaceId", json_object_new_string(c.surface_id));
		bad |= th_json_put(m, "version", json_object_new_string(version_of(cfg)));
		bad |= th_json_put(m, "deleteSurface", body);
		bad |= th_json_push(del, m);
		char *artifact = NULL;
		if (bad)
			rc = th_error_set(e, TH_ENOMEM,
			                  "out of memory building a deleteSurface message");
		else
			rc = th_ui_emit(st, cfg, row, del, &artifact, e);
		free(artifact);
		json_object_put(del);
	}
	th_confirm_free(&c);
	return rc;
}
