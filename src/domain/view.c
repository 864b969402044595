/* SPDX-License-Identifier: Apache-2.0 */
#include "domain/view.h"

#include <stdint.h>
#include <string.h>

#include "a2a/a2a.h"
#include "domain/access.h"
#include "domain/ext.h"
#include "util/jsonx.h"

static json_object *parse_or_null(const char *text)
{
	return text != NULL ? json_tokener_parse(text) : NULL;
}

json_object *th_view_status(const struct th_task_row *row)
{
	return th_a2a_status((enum th_state)row->state, parse_or_null(row->status_message_json),
	                     row->status_ms);
}

json_object *th_view_status_of(const struct th_task_row *row, json_object *message)
{
	return th_a2a_status((enum th_state)row->state, json_object_get(message), row->status_ms);
}

/* row's status extension as an object. The plain {"sub_state":"<its sub_state>"} the
 * store derives for most tasks (TASK_COLS; meta_to_store leaves it unstored) is built
 * from the row; any other text is parsed. */
static json_object *status_ext_of(const struct th_task_row *row)
{
	static const char head[] = "{\"sub_state\":\"";
	const char *t = row->status_meta_json, *sub = row->sub_state;
	const size_t hl = sizeof head - 1, sl = sub != NULL ? strlen(sub) : 0;
	if (sl == 0 || strncmp(t, head, hl) != 0 || strncmp(t + hl, sub, sl) != 0 ||
	    strcmp(t + hl + sl, "\"}") != 0)
		return json_tokener_parse(t);
	return th_status_ext(sub, NULL, NULL);
}

json_object *th_view_status_metadata(const struct th_task_row *row)
{
	if (row->state != TH_STATE_INPUT_REQUIRED || row->status_meta_json == NULL)
		return NULL;
	json_object *meta = json_object_new_object();
	json_object *ext = status_ext_of(row);
	if (th_json_put(meta, TH_META_STATUS, ext) != 0) {
		json_object_put(meta);
		return NULL;
	}
	return meta;
}

static json_object *task_refs(const char *const *ids, size_t n)
{
	json_object *arr = json_object_new_array();
	int bad = arr == NULL;
	for (size_t i = 0; !bad && i < n; i++) {
		json_object *ref = json_object_new_object();
		bad |= th_json_put(ref, "task_id", json_object_new_string(ids[i]));
		bad |= th_json_push(arr, ref);
	}
	if (bad) {
		json_object_put(arr);
		return NULL; /* decision-026: the caller reports TH_ENOMEM */
	}
	return arr;
}

th_err th_view_task_ext(struct th_store *st, const struct th_task_row *row, json_object **out,
                        struct th_error *e)
{
	*out = NULL;
	struct th_participant *ps = NULL;
	size_t np = 0;
	struct th_subtask_ref *subs = NULL;
	size_t ns = 0;
	th_err rc = th_store_participants(st, row->id, &ps, &np, e);
	if (rc == TH_OK)
		rc = th_store_subtasks(st, row->id, 0, &subs, &ns, e);
	if (rc != TH_OK) {
		th_participants_free(ps, np);
		return rc;
	}
	json_object *stored = parse_or_null(row->ext_json);
	json_object *ext = json_object_new_object();
	int bad = th_json_put(ext, "name", json_object_new_string(row->name));
	bad |= th_json_put(ext, "goal", json_object_new_string(row->goal));
	/* Stored attributes (type, description, acceptance_criteria, plan) keep their
	 * order; the derived lists come from their own tables. */
	static const char *const stored_keys[] = {"type", "description", "acceptance_criteria"};
	for (size_t i = 0; i < sizeof stored_keys / sizeof stored_keys[0]; i++) {
		json_object *v = NULL;
		/* v is NULL for a stored JSON null (a task without a type). A default is not
		 * stored (STORE-10): no type is null, no description "", no criteria []. */
		if (stored != NULL && json_object_object_get_ex(stored, stored_keys[i], &v))
			bad |= th_json_put_null(ext, stored_keys[i], json_object_get(v));
		else if (i == 0)
			bad |= th_json_put_null(ext, stored_keys[i], NULL);
		else
			bad |= th_json_put(ext, stored_keys[i],
			                   i == 1 ? json_object_new_string("")
			                          : json_object_new_array());
	}
	json_object *parr = json_object_new_array();
	for (size_t i = 0; i < np; i++) {
		json_object *p = json_object_new_object();
		bad |= th_json_put(p, "id", json_object_new_string(ps[i].id));
		bad |= th_json_put(p, "kind", json_object_new_string(ps[i].kind));
		bad |= th_json_put(p, "role", json_object_new_string(ps[i].role));
		bad |= th_json_put(p, "display_name", json_object_new_string(ps[i].display_name));
		bad |= th_json_push(parr, p);
	}
	bad |= th_json_put(ext, "participants", parr);
	const char *parent = row->parent_id;
	bad |= th_json_put(ext, "parent_tasks", task_refs(parent ? &parent : NULL, parent ? 1 : 0));
	json_object *sarr = json_object_new_array();
	for (size_t i = 0; i < ns; i++) {
		json_object *ref = json_object_new_object();
		bad |= th_json_put(ref, "task_id", json_object_new_string(subs[i].id));
		bad |= th_json_push(sarr, ref);
	}
	bad |= th_json_put(ext, "sub_tasks", sarr);
	json_object *plan = NULL;
	rc = th_view_plan(st, row->id, &plan, e);
	bad |= th_json_put_null(ext, "plan", plan); /* no plan: null */
	json_object_put(stored);
	th_participants_free(ps, np);
	th_subtask_refs_free(subs, ns);
	if (rc == TH_OK && bad)
		rc = th_error_set(e, TH_ENOMEM, "out of memory building a task's extension");
	if (rc != TH_OK) {
		json_object_put(ext);
		return rc;
	}
	*out = ext;
	return TH_OK;
}

th_err th_view_plan(struct th_store *st, const char *task_id, json_object **out, struct th_error *e)
{
	*out = NULL;
	struct th_plan_step *steps = NULL;
	size_t n = 0;
	th_err rc = th_store_plan(st, task_id, &steps, &n, e);
	if (rc != TH_OK || n == 0)
		return rc;
	json_object *plan = json_object_new_object(), *arr = json_object_new_array();
	int bad = 0;
	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_new_object();
		bad |= th_json_put(s, "id", json_object_new_string(steps[i].step_id));
		bad |= th_json_put(s, "name", json_object_new_string(steps[i].name));
		bad |= th_json_put(s, "description", json_object_new_string(steps[i].description));
		bad |=
		    th_json_put_null(s, "depends_on", json_tokener_parse(steps[i].depends_on_json));
		bad |= th_json_put(
		    s, "state", json_object_new_string(th_store_step_state_name(steps[i].state)));
		bad |= steps[i].output != NULL
		           ? th_json_put(s, "output", json_object_new_string(steps[i].output))
		           : th_json_put_null(s, "output", NULL);
		bad |= th_json_put_null(s, "linked_tasks",
		                        json_tokener_parse(steps[i].linked_tasks_json));
		bad |= th_json_push(arr, s);
	}
	bad |= th_json_put(plan, "steps", arr);
	th_plan_steps_free(steps, n);
	if (bad) {
		json_object_put(plan);
		return th_error_set(e, TH_ENOMEM, "out of memory building a task's plan");
	}
	*out = plan;
	return TH_OK;
}

const char *th_view_side_channel(json_object *msg, const char *task_id)
{
	json_object *parts = json_object_object_get(msg, "parts");
	for (size_t i = 0; i < json_object_array_length(parts); i++) {
		json_object *p = json_object_array_get_idx(parts, i);
		const char *mt = th_json_str(p, "mediaType");
		if (mt == NULL || strcmp(mt, TH_MT_CHANNEL) != 0)
			continue;
		const char *ch = th_json_str(json_object_object_get(p, "data"), "channel_id");
		if (ch != NULL && strcmp(ch, task_id) != 0)
			return ch;
	}
	return NULL;
}

/* Replaces history's contents with keep's, in place: the caller owns history. */
static th_err replace_history(json_object *history, json_object *keep, th_err rc,
                              struct th_error *e)
{
	size_t n = json_object_array_length(history);
	if (rc == TH_OK && json_object_array_length(keep) != n) {
		json_object_array_del_idx(history, 0, n);
		for (size_t i = 0; rc == TH_OK && i < json_object_array_length(keep); i++)
			if (th_json_push(history,
			                 json_object_get(json_object_array_get_idx(keep, i))))
				rc =
				    th_error_set(e, TH_ENOMEM, "out of memory filtering a history");
	}
	json_object_put(keep);
	return rc;
}

/* Who may read a side channel's message: a reader answers 1 (keep it) or 0 in *keep. */
typedef th_err (*side_reader)(const void *arg, const char *task_id, const char *channel, int *keep,
                              struct th_error *e);

/* Keeps, in place, the messages of history that are in the task channel or that may read
 * decides to keep: the one walk both filters below share. */
static th_err filter_sides(json_object *history, const char *task_id, side_reader may_read,
                           const void *arg, struct th_error *e)
{
	json_object *keep = json_object_new_array();
	if (keep == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	th_err rc = TH_OK;
	for (size_t i = 0; rc == TH_OK && i < json_object_array_length(history); i++) {
		json_object *m = json_object_array_get_idx(history, i);
		const char *ch = th_view_side_channel(m, task_id);
		int kept = 1;
		if (ch != NULL)
			rc = may_read(arg, task_id, ch, &kept, e);
		if (rc == TH_OK && kept && th_json_push(keep, json_object_get(m)) != 0)
			rc = th_error_set(e, TH_ENOMEM, "out of memory filtering a history");
	}
	return replace_history(history, keep, rc, e);
}

struct member_of {
	struct th_store *st;
	const char *viewer;
};

static th_err member_reads(const void *arg, const char *task_id, const char *channel, int *keep,
                           struct th_error *e)
{
	const struct member_of *m = arg;
	return th_store_channel_is_member(m->st, task_id, channel, m->viewer, NULL, keep, e);
}

/* CH-2: messages of a side channel are only for its members. */
static th_err filter_history(struct th_store *st, const char *task_id, const char *viewer,
                             json_object *history, struct th_error *e)
{
	struct member_of m = {st, viewer};
	return filter_sides(history, task_id, member_reads, &m, e);
}

/* SEC-2: what a turn's audience may read (decision-034): the task channel's messages
 * and, when the turn is on a side channel, that channel's; every other side channel's
 * are left out. Membership is not asked: a side channel whose members happen to be every
 * participant today stays out of a task-channel turn, whose reply anyone invited later reads too.
 */
static th_err turn_reads(const void *arg, const char *task_id, const char *channel, int *keep,
                         struct th_error *e)
{
	(void)task_id;
	(void)e;
	const char *own = arg;
	*keep = own != NULL && strcmp(channel, own) == 0;
	return TH_OK;
}

/* The walk of th_view_history_window: the newest kept messages, newest first. */
struct window {
	const char *task_id;
	const char *channel; /* the turn's side channel, or NULL */
	json_object *acc;    /* owned by th_view_history_window (json_object_put) */
	size_t want;
	size_t left; /* bytes of stored text still allowed */
};

static int window_one(void *arg, const char *text, struct th_error *e)
{
	struct window *w = arg;
	size_t n = strlen(text);
	if (n > w->left && json_object_array_length(w->acc) > 0)
		return 1;
	json_object *m = json_tokener_parse(text);
	if (m == NULL) {
		th_error_set(e, TH_EINTERNAL, "a message of task %s is not JSON", w->task_id);
		return -1;
	}
	const char *ch = th_view_side_channel(m, w->task_id);
	int keep = 1; /* the task channel is every turn's; a side channel, the rule's */
	if (ch != NULL)
		turn_reads(w->channel, w->task_id, ch, &keep, e);
	if (!keep) {
		json_object_put(m);
		return 0;
	}
	if (th_json_push(w->acc, m) != 0) {
		th_error_set(e, TH_ENOMEM, "out of memory reading a turn's context");
		return -1;
	}
	w->left -= n < w->left ? n : w->left;
	return json_object_array_length(w->acc) >= w->want ? 1 : 0;
}

th_err th_view_history_window(struct th_store *st, const char *task_id, const char *channel,
                              int max_msgs, size_t max_bytes, json_object **out, struct th_error *e)
{
	*out = NULL;
	struct window w = {task_id, channel, json_object_new_array(),
	                   max_msgs > 0 ? (size_t)max_msgs : 0, max_bytes};
	if (w.acc == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory reading a turn's context");
	th_err rc = w.want > 0 ? th_store_history_back(st, task_id, 0, window_one, &w, e) : TH_OK;
	size_t n = json_object_array_length(w.acc);
	json_object *hist = rc == TH_OK ? json_object_new_array_ext((int)n) : NULL;
	if (rc == TH_OK && hist == NULL)
		rc = th_error_set(e, TH_ENOMEM, "out of memory reading a turn's context");
	for (size_t i = n; rc == TH_OK && i-- > 0;)
		if (th_json_push(hist, json_object_get(json_object_array_get_idx(w.acc, i))) != 0)
			rc = th_error_set(e, TH_ENOMEM, "out of memory reading a turn's context");
	json_object_put(w.acc);
	if (rc != TH_OK) {
		json_object_put(hist);
		return rc;
	}
	*out = hist;
	return TH_OK;
}

/* The Task of row from its parts, every part taken (freed on failure): the status
 * metadata and the task extension under metadata, keys in wire order. The one place a
 * task view is put together, so that a view built from a part's own writes
 * (th_view_task_replied) is the one a read gives. NULL when out of memory. */
static json_object *assemble(const struct th_task_row *row, json_object *status, json_object *ext,
                             json_object *history, json_object *artifacts)
{
	json_object *meta = th_view_status_metadata(row);
	if (meta == NULL)
		meta = json_object_new_object();
	if (th_json_put(meta, TH_META_TASK, ext) != 0) {
		json_object_put(meta);
		json_object_put(status);
		json_object_put(history);
		json_object_put(artifacts);
		return NULL;
	}
	return th_a2a_task(row->id, row->context_id, status, history, artifacts, meta);
}

/* Messages read per query while walking a history back from its end. */
#define HISTORY_PAGE 100

/* Moves the messages of page (newest last) onto acc (newest first) until acc holds want
 * or the bytes *left run out (a first message is taken while any are left); 1 when acc is
 * full, -1 out of memory. A message read as stored text is measured as such, a parsed one
 * by its serialisation. */
static int take_page(json_object *page, json_object *acc, int want, size_t *left)
{
	for (size_t i = json_object_array_length(page); i-- > 0;) {
		json_object *m = json_object_array_get_idx(page, i);
		size_t n = json_object_is_type(m, json_type_string)
		               ? (size_t)json_object_get_string_len(m)
		               : strlen(json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN));
		if (*left == 0 || (n > *left && json_object_array_length(acc) > 0))
			return 1;
		*left -= n < *left ? n : *left;
		if (th_json_push(acc, json_object_get(m)) != 0)
			return -1;
		if (json_object_array_length(acc) >= (size_t)want)
			return 1;
	}
	return 0;
}

/* SEC-3: the newest `want` messages viewer may read (NULL: every message, kept as stored
 * text since nobody reads it), oldest first, into *out. Read from the end in pages, so
 * that no long history, nor a long run of side-channel messages the viewer may not see,
 * is ever held whole. */
static th_err read_history(struct th_store *st, const struct th_task_row *row, const char *viewer,
                           int want, size_t *left, json_object **out, struct th_error *e)
{
	*out = NULL;
	json_object *acc = json_object_new_array(); /* newest first */
	if (acc == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory reading a history");
	int raw = viewer == NULL;
	/* The newest page in one statement; positions are 1..n, so only a full page asks
	 * where the history ends, to walk on from there (most tasks never get that far). */
	int64_t upto = 0;
	json_object *page0 = NULL;
	const char *task_id = row->id;
	th_err rc = th_store_history_of(st, task_id, row->context_id, HISTORY_PAGE, raw, &page0, e);
	for (int full = 0, first = 1; rc == TH_OK && !full; first = 0) {
		json_object *page = first ? page0 : NULL;
		if (!first)
			rc = th_store_history_range(st, task_id,
			                            upto > HISTORY_PAGE ? upto - HISTORY_PAGE : 0,
			                            upto, raw, &page, e);
		size_t got = rc == TH_OK ? json_object_array_length(page) : 0;
		if (rc == TH_OK && viewer != NULL)
			rc = filter_history(st, task_id, viewer, page, e);
		if (rc == TH_OK && (full = take_page(page, acc, want, left)) < 0)
			rc = th_error_set(e, TH_ENOMEM, "out of memory reading a history");
		json_object_put(page);
		if (rc == TH_OK && !full && first && got == HISTORY_PAGE &&
		    (upto = th_store_history_last_pos(st, task_id)) < 0)
			rc = th_error_set(e, TH_EINTERNAL, "reading the history of task %s failed",
			                  task_id);
		upto -= HISTORY_PAGE;
		full = full || upto <= 0;
	}
	size_t n = json_object_array_length(acc);
	json_object *hist = rc == TH_OK ? json_object_new_array_ext((int)n) : NULL;
	if (rc == TH_OK && hist == NULL)
		rc = th_error_set(e, TH_ENOMEM, "out of memory reading a history");
	for (size_t i = n; rc == TH_OK && i-- > 0;)
		if (th_json_push(hist, json_object_get(json_object_array_get_idx(acc, i))) != 0)
			rc = th_error_set(e, TH_ENOMEM, "out of memory reading a history");
	json_object_put(acc);
	if (rc != TH_OK) {
		json_object_put(hist);
		return rc;
	}
	*out = hist;
	return TH_OK;
}

th_err th_view_task(struct th_store *st, const struct th_task_row *row, const char *viewer,
                    int history_length, int include_artifacts, json_object **out,
                    struct th_error *e)
{
	size_t left = TH_HISTORY_BYTES_MAX;
	return th_view_task_within(st, row, viewer, history_length, include_artifacts, &left, out,
	                           e);
}

void th_view_expect_within(struct th_store *st, const struct th_task_row *row, const char *viewer,
                           int history_length, int include_artifacts)
{
	th_store_expect_view(st, row->id, 0, history_length != 0 ? HISTORY_PAGE : 0, viewer != NULL,
	                     include_artifacts);
}

th_err th_view_task_within(struct th_store *st, const struct th_task_row *row, const char *viewer,
                           int history_length, int include_artifacts, size_t *left,
                           json_object **out, struct th_error *e)
{
	*out = NULL;
	json_object *ext = NULL, *history = NULL, *artifacts = NULL;
	th_err rc = th_view_task_ext(st, row, &ext, e);
	/* Only a task with side channels needs its messages filtered (CH-2). */
	if (viewer != NULL && !th_store_has_side_channels(st, row->id))
		viewer = NULL;
	if (history_length < 0 || history_length > TH_HISTORY_MAX)
		history_length = TH_HISTORY_MAX;
	if (rc == TH_OK && history_length != 0)
		rc = read_history(st, row, viewer, history_length, left, &history, e);
	if (rc == TH_OK && include_artifacts)
		rc = th_store_artifacts(st, row->id, &artifacts, e);
	if (rc != TH_OK) {
		json_object_put(ext);
		json_object_put(history);
		json_object_put(artifacts);
		return rc;
	}
	*out = assemble(row, th_view_status(row), ext, history, artifacts);
	return *out != NULL ? TH_OK
	                    : th_error_set(e, TH_ENOMEM, "out of memory building a task view");
}

json_object *th_view_task_replied(json_object *before, const struct th_task_row *row,
                                  json_object *reply, int history_length)
{
	json_object *ext = NULL;
	json_object_object_get_ex(json_object_object_get(before, "metadata"), TH_META_TASK, &ext);
	json_object *history = NULL;
	if (history_length != 0) {
		json_object *was = json_object_object_get(before, "history");
		history = json_object_new_array();
		int bad = history == NULL;
		for (size_t i = 0; !bad && i < json_object_array_length(was); i++)
			bad = th_json_push(history,
			                   json_object_get(json_object_array_get_idx(was, i)));
		if (bad || th_json_push(history, json_object_get(reply)) != 0) {
			json_object_put(history);
			return NULL;
		}
		th_a2a_trim_history(history, history_length);
	}
	return assemble(row, th_view_status_of(row, reply), json_object_get(ext), history, NULL);
}

/* One try of th_view_task_read: seal 1 ends the snapshot with its reads sent ahead;
 * *torn 1 when a read was then answered outside it (*out is NULL then). */
static th_err view_once(struct th_store *st, const char *id, const char *viewer, int history_length,
                        int include_artifacts, const struct th_view_checks *x, int seal,
                        json_object **out, int *torn, struct th_error *e)
{
	struct th_task_row row = {0};
	int began = 0;
	*out = NULL;
	*torn = 0;
	th_err rc = x != NULL && x->version != NULL ? th_store_read_begin_versioned(st, &began, e)
	                                            : th_store_read_begin(st, &began, e);
	/* SCALE-1: on PostgreSQL the view's reads leave at once, in its snapshot. */
	if (rc == TH_OK && began) {
		if (x != NULL)
			th_store_expect_view_checks(st, x->tenant, id,
			                            x->access != NULL ? viewer : NULL,
			                            x->expiry != NULL ? x->lease_ms : -1);
		th_store_expect_view(st, id, 1, history_length != 0 ? HISTORY_PAGE : 0,
		                     viewer != NULL, include_artifacts);
		if (x != NULL && x->generation != NULL)
			th_store_expect_generation(st, id);
		if (seal)
			th_store_read_seal(st);
	}
	if (x != NULL && x->version != NULL)
		*x->version = rc == TH_OK && began ? th_store_read_version(st) : -1;
	if (rc == TH_OK && x != NULL && x->access != NULL)
		rc = th_access_check(st, x->tenant, id, viewer, TH_ACCESS_READ, x->access, NULL, e);
	if (rc == TH_OK && x != NULL && x->expiry != NULL) {
		struct th_error ignored;
		th_error_clear(&ignored);
		if (th_store_turn_next_expiry(st, id, x->lease_ms, x->expiry, &ignored) != TH_OK)
			*x->expiry = -2;
	}
	if (rc == TH_OK)
		rc = th_store_task_get(st, id, &row, e);
	if (rc == TH_ENOTFOUND)
		rc = th_access_not_found(id, e);
	else if (rc == TH_OK)
		rc = th_view_task(st, &row, viewer, history_length, include_artifacts, out, e);
	if (rc == TH_OK && x != NULL && x->generation != NULL)
		rc = th_store_task_generation(st, id, INT64_MAX, x->generation, x->last_seq, e);
	*torn = began && th_store_read_torn(st);
	th_store_read_end(st, began);
	th_task_row_free(&row);
	if (*torn) {
		json_object_put(*out);
		*out = NULL;
	}
	return rc;
}

th_err th_view_task_read(struct th_store *st, const char *id, const char *viewer,
                         int history_length, int include_artifacts, const struct th_view_checks *x,
                         json_object **out, struct th_error *e)
{
	int torn = 0;
	th_err rc =
	    view_once(st, id, viewer, history_length, include_artifacts, x, 1, out, &torn, e);
	if (!torn)
		return rc;
	/* Something was read outside the sealed snapshot (TURN-7: a view is never torn):
	 * all of it again, in a snapshot that stays open for what it needs. */
	th_error_clear(e);
	return view_once(st, id, viewer, history_length, include_artifacts, x, 0, out, &torn, e);
}

th_err th_view_task_by_id(struct th_store *st, const char *id, const char *viewer,
                          int history_length, int include_artifacts, json_object **out,
                          struct th_error *e)
{
	return th_view_task_read(st, id, viewer, history_length, include_artifacts, NULL, out, e);
}
