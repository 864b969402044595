/* SPDX-License-Identifier: Apache-2.0 */
#include "harness_fixture.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/settings.h"
#include "domain/ext.h"
#include "store/store.h"
#include "util/jsonx.h"

static char fx_dir[256];
unsigned fx_extensions;

void fx_open(struct th_app *app, void (*cfg_tweak)(struct th_config *))
{
	snprintf(fx_dir, sizeof fx_dir, "/tmp/th-unit-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(fx_dir));
	struct th_config *cfg = malloc(sizeof *cfg);
	ck_assert_ptr_nonnull(cfg);
	ck_assert_int_eq(th_config_defaults(cfg), TH_OK);
	char db[300];
	snprintf(db, sizeof db, "%s/db/th.db", fx_dir);
	struct th_error e;
	th_error_clear(&e);
	ck_assert_int_eq(th_config_set(cfg, "db", db, &e), TH_OK);
	ck_assert_int_eq(th_config_set(cfg, "commands_dir", "/nonexistent", &e), TH_OK);
	if (cfg_tweak != NULL)
		cfg_tweak(cfg);
	th_err rc = th_app_open(app, cfg, 0, &e);
	ck_assert_msg(rc == TH_OK, "th_app_open: %s", e.msg);
}

void fx_close(struct th_app *app)
{
	fx_extensions = 0;
	th_app_close(app);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx_dir);
	ck_assert_int_eq(system(cmd), 0);
}

json_object *fx_call(struct th_app *app, const char *participant, enum th_op op,
                     struct th_error *err, const char *json_fmt, ...)
{
	char *buf = NULL;
	va_list ap;
	va_start(ap, json_fmt);
	ck_assert_int_ge(vasprintf(&buf, json_fmt, ap), 0);
	va_end(ap);
	json_object *params = json_tokener_parse(buf);
	ck_assert_msg(params != NULL, "bad test JSON: %.200s", buf);
	free(buf);
	struct th_call call = {.participant = participant, .extensions = fx_extensions};
	json_object *result = NULL;
	th_error_clear(err);
	th_err rc = th_service_call(app, &call, op, params, &result, err);
	json_object_put(params);
	if (rc != TH_OK) {
		ck_assert_ptr_null(result);
		return NULL;
	}
	if (result == NULL)
		return NULL;
	/* What a client reads: an answer may hold text kept verbatim (th_json_raw). */
	json_object *wire = json_tokener_parse(th_json_text(result));
	ck_assert_ptr_nonnull(wire);
	json_object_put(result);
	return wire;
}

static json_object *unwrap_task(json_object *result)
{
	if (result == NULL)
		return NULL;
	json_object *task = NULL;
	ck_assert(json_object_object_get_ex(result, "task", &task));
	json_object_get(task);
	json_object_put(result);
	return task;
}

/* SendMessage of one text part with configuration (a JSON member list, "" for none). */
static json_object *send_text(struct th_app *app, const char *participant, const char *task_id,
                              const char *message_id, const char *text, const char *config,
                              struct th_error *err)
{
	json_object *t = json_object_new_string(text);
	char tid[300] = "";
	if (task_id != NULL)
		snprintf(tid, sizeof tid, "\"taskId\":\"%s\",", task_id);
	json_object *r = fx_call(app, participant, TH_OP_SEND_MESSAGE, err,
	                         "{\"message\":{%s\"messageId\":\"%s\",\"role\":\"ROLE_USER\","
	                         "\"parts\":[{\"text\":%s}]}%s}",
	                         tid, message_id, th_json_text(t), config);
	json_object_put(t);
	return unwrap_task(r);
}

json_object *fx_send_text(struct th_app *app, const char *participant, const char *task_id,
                          const char *message_id, const char *text, struct th_error *err)
{
	return send_text(app, participant, task_id, message_id, text, "", err);
}

json_object *fx_send_later(struct th_app *app, const char *participant, const char *task_id,
                           const char *message_id, const char *text, struct th_error *err)
{
	return send_text(app, participant, task_id, message_id, text,
	                 ",\"configuration\":{\"returnImmediately\":true}", err);
}

json_object *fx_complete(struct th_app *app, const char *participant, const char *task_id,
                         struct th_error *err)
{
	static int n;
	return unwrap_task(fx_call(app, participant, TH_OP_SEND_MESSAGE, err,
	                           "{\"message\":{\"taskId\":\"%s\",\"messageId\":\"ctl-%d\","
	                           "\"role\":\"ROLE_USER\",\"parts\":[{\"data\":{\"kind\":"
	                           "\"control\",\"action\":\"complete\"},\"mediaType\":\"%s\"}]}}",
	                           task_id, ++n, TH_MT_EVENT));
}

long fx_count(struct th_app *app, const char *table)
{
	char sql[200];
	snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM %s", table);
	sqlite3_stmt *s = NULL;
	ck_assert_int_eq(sqlite3_prepare_v2(th_store_db(app->store), sql, -1, &s, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
	long n = (long)sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return n;
}

char *fx_text(struct th_app *app, const char *fmt, ...)
{
	char sql[1024];
	va_list ap;
	va_start(ap, fmt);
	int len = vsnprintf(sql, sizeof sql, fmt, ap);
	va_end(ap);
	ck_assert_msg(len > 0 && (size_t)len < sizeof sql, "fx_text: SQL too long");
	sqlite3_stmt *s = NULL;
	ck_assert_msg(sqlite3_prepare_v2(th_store_db(app->store), sql, -1, &s, NULL) == SQLITE_OK,
	              "%s: %s", sql, sqlite3_errmsg(th_store_db(app->store)));
	ck_assert_msg(sqlite3_step(s) == SQLITE_ROW, "no row: %s", sql);
	const char *v = (const char *)sqlite3_column_text(s, 0);
	char *out = strdup(v != NULL ? v : "NULL");
	sqlite3_finalize(s);
	ck_assert_ptr_nonnull(out);
	return out;
}

void fx_add_participant(struct th_app *app, const char *task_id, const char *id, const char *role)
{
	const struct th_participant_in p = {id, "human", role, ""};
	struct th_error e;
	th_error_clear(&e);
	ck_assert_int_eq(th_store_begin(app->store, &e), TH_OK);
	ck_assert_int_eq(th_store_participant_put(app->store, task_id, &p, &e), TH_OK);
	ck_assert_int_eq(th_store_commit(app->store, &e), TH_OK);
}

const char *fx_task_id(json_object *task)
{
	return th_json_str(task, "id");
}

const char *fx_state(json_object *task)
{
	return th_json_str(json_object_object_get(task, "status"), "state");
}

const char *fx_status_text(json_object *task)
{
	json_object *msg =
	    json_object_object_get(json_object_object_get(task, "status"), "message");
	json_object *parts = json_object_object_get(msg, "parts");
	return th_json_str(json_object_array_get_idx(parts, 0), "text");
}

const char *fx_sub_state(json_object *task)
{
	json_object *meta = json_object_object_get(task, "metadata");
	return th_json_str(json_object_object_get(meta, TH_META_STATUS), "sub_state");
}
