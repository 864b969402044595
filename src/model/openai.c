/* SPDX-License-Identifier: Apache-2.0 */
/* openai.c — the "openai" model backend (TURN-2): one POST to
 * <openai_base_url>/chat/completions per round, for any OpenAI-compatible endpoint
 * (OpenAI, OpenRouter, Ollama, llama.cpp, vLLM). docs/models.md gives the mapping.
 *
 * The API key is read from the environment variable named by openai_api_key_env at
 * each call, never from configuration or a request; with none, no Authorization
 * header is sent. The transfer runs on a multi handle polled every
 * TH_MODEL_CUT_POLL_MS; the progress callback and the loop both ask whether the turn
 * was cut (CTL-3) and abort it when so. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_int.h"
#include "util/buf.h"
#include "util/ids.h"
#include "util/jsonx.h"
#include "util/curlx.h"

/* A data part is quoted in the history up to this many bytes of its JSON. */
#define DATA_QUOTE 500

/* ---- the request -------------------------------------------------------------------------- */

static int push_msg(json_object *msgs, const char *role, const char *content)
{
	json_object *m = json_object_new_object();
	if (m == NULL || th_json_put(m, "role", json_object_new_string(role)) != 0 ||
	    th_json_put(m, "content", json_object_new_string(content)) != 0 ||
	    json_object_array_add(msgs, m) != 0) {
		json_object_put(m);
		return -1;
	}
	return 0;
}

/* The system message: who the model is, the task's context, how tools are used. */
static void system_text(const struct th_model_input *in, struct th_buf *b)
{
	th_buf_puts(b, "You are the agent of a shared task in tiny-harness, working with its "
	               "participants. ");
	if (in->tools != NULL && json_object_array_length(in->tools) > 0)
		th_buf_puts(b,
		            "Use the tools offered to change the task (plan, steps, sub-tasks, "
		            "questions to participants, roles, UI); each tool call gets a result. "
		            "When you are done calling tools, answer the participants with text. ");
	th_buf_puts(b, "Answer the latest message.\n");
	if (in->task_id != NULL)
		th_buf_printf(b, "Task id: %s\n", in->task_id);
	if (in->goal != NULL)
		th_buf_printf(b, "Goal: %s\n", in->goal);
	if (in->task != NULL)
		th_buf_printf(b,
		              "The task (name, goal, participants and roles, plan, sub-tasks) as "
		              "JSON: %s\n",
		              th_json_text(in->task));
}

/* A history message as text: its text parts, data parts summarised, files named. */
static void message_text(json_object *msg, int user, struct th_buf *b)
{
	json_object *parts = json_object_object_get(msg, "parts");
	const char *who = th_json_str(json_object_object_get(msg, "metadata"), "participant_id");
	if (user && who != NULL)
		th_buf_printf(b, "[%s] ", who);
	size_t start = b->len;
	for (size_t i = 0;
	     json_object_is_type(parts, json_type_array) && i < json_object_array_length(parts);
	     i++) {
		json_object *p = json_object_array_get_idx(parts, i);
		json_object *v;
		if (b->len > start)
			th_buf_puts(b, "\n");
		if ((v = json_object_object_get(p, "text")) != NULL) {
			th_buf_puts(b, json_object_get_string(v));
		} else if (json_object_object_get_ex(p, "data", &v)) {
			const char *d = th_json_text(v);
			size_t n = strlen(d);
			th_buf_printf(b, "[data: %.*s%s]", (int)(n > DATA_QUOTE ? DATA_QUOTE : n),
			              d, n > DATA_QUOTE ? "…" : "");
		} else {
			const char *name = th_json_str(p, "filename");
			const char *type = th_json_str(p, "mediaType");
			th_buf_printf(b, "[file: %s]", name ? name : type ? type : "unnamed");
		}
	}
}

static int is_agent(json_object *msg)
{
	const char *role = th_json_str(msg, "role");
	return role != NULL && (strcmp(role, "ROLE_AGENT") == 0 || strcmp(role, "agent") == 0);
}

static int add_history(json_object *msgs, const struct th_model_input *in)
{
	size_t n = json_object_is_type(in->history, json_type_array)
	               ? json_object_array_length(in->history)
	               : 0;
	for (size_t i = 0; i < n; i++) {
		json_object *m = json_object_array_get_idx(in->history, i);
		int agent = is_agent(m);
		struct th_buf b;
		th_buf_init(&b);
		message_text(m, !agent, &b);
		if (b.oom) {
			th_buf_free(&b);
			return -1;
		}
		/* The input itself is usually the last message: it comes once, as the prompt. */
		int is_prompt = i + 1 == n && !agent && in->prompt != NULL && b.len > 0 &&
		                strlen(in->prompt) <= b.len &&
		                strcmp(b.data + b.len - strlen(in->prompt), in->prompt) == 0;
		int rc = 0;
		if (b.len > 0 && !is_prompt)
			rc = push_msg(msgs, agent ? "assistant" : "user", b.data);
		th_buf_free(&b);
		if (rc != 0)
			return -1;
	}
	return 0;
}

/* Each earlier round: the assistant's tool calls, then one "tool" message per result. */
static int add_rounds(json_object *msgs, json_object *rounds)
{
	size_t n =
	    json_object_is_type(rounds, json_type_array) ? json_object_array_length(rounds) : 0;
	for (size_t i = 0; i < n; i++) {
		json_object *r = json_object_array_get_idx(rounds, i);
		json_object *calls = json_object_object_get(r, "tool_calls");
		json_object *results = json_object_object_get(r, "results");
		json_object *m = json_object_new_object(), *tc = json_object_new_array();
		if (m == NULL || tc == NULL ||
		    th_json_put(m, "role", json_object_new_string("assistant")) ||
		    json_object_object_add(m, "content", NULL) != 0 ||
		    json_object_array_add(msgs, m) != 0) {
			json_object_put(m);
			json_object_put(tc);
			return -1;
		}
		if (th_json_put(m, "tool_calls", tc) != 0)
			return -1;
		for (size_t k = 0; json_object_is_type(calls, json_type_array) &&
		                   k < json_object_array_length(calls);
		     k++) {
			json_object *c = json_object_array_get_idx(calls, k);
			json_object *o = json_object_new_object(), *f = json_object_new_object();
			json_object *args = json_object_object_get(c, "arguments");
			if (o == NULL || f == NULL || json_object_array_add(tc, o) != 0) {
				json_object_put(o);
				json_object_put(f);
				return -1;
			}
			const char *id = th_json_str(c, "id"), *name = th_json_str(c, "name");
			if (th_json_put(o, "id", json_object_new_string(id ? id : "")) ||
			    th_json_put(o, "type", json_object_new_string("function")) ||
			    th_json_put(o, "function", f) ||
			    th_json_put(f, "name", json_object_new_string(name ? name : "")) ||
			    th_json_put(
			        f, "arguments",
			        json_object_new_string(args != NULL ? th_json_text(args) : "{}")))
				return -1;
		}
		for (size_t k = 0; json_object_is_type(results, json_type_array) &&
		                   k < json_object_array_length(results);
		     k++) {
			json_object *res = json_object_array_get_idx(results, k);
			const char *id = th_json_str(res, "id"),
			           *content = th_json_str(res, "content");
			json_object *ok = json_object_object_get(res, "ok");
			struct th_buf b;
			th_buf_init(&b);
			th_buf_printf(&b, "%s%s", json_object_get_boolean(ok) ? "" : "error: ",
			              content ? content : "");
			json_object *t = json_object_new_object();
			int bad =
			    b.oom || t == NULL ||
			    th_json_put(t, "role", json_object_new_string("tool")) ||
			    th_json_put(t, "tool_call_id", json_object_new_string(id ? id : "")) ||
			    th_json_put(t, "content", json_object_new_string(b.len ? b.data : ""));
			th_buf_free(&b);
			if (bad || json_object_array_add(msgs, t) != 0) {
				json_object_put(t);
				return -1;
			}
		}
	}
	return 0;
}

static int add_tools(json_object *req, json_object *tools)
{
	size_t n =
	    json_object_is_type(tools, json_type_array) ? json_object_array_length(tools) : 0;
	if (n == 0)
		return 0;
	json_object *arr = json_object_new_array();
	if (th_json_put(req, "tools", arr) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		json_object *t = json_object_array_get_idx(tools, i);
		json_object *schema = json_object_object_get(t, "input_schema");
		const char *desc = th_json_str(t, "description"), *name = th_json_str(t, "name");
		json_object *o = json_object_new_object(), *f = json_object_new_object();
		if (o == NULL || f == NULL || json_object_array_add(arr, o) != 0) {
			json_object_put(o);
			json_object_put(f);
			return -1;
		}
		if (th_json_put(o, "type", json_object_new_string("function")) ||
		    th_json_put(o, "function", f) ||
		    th_json_put(f, "name", json_object_new_string(name ? name : "")) ||
		    th_json_put(f, "description", json_object_new_string(desc ? desc : "")) ||
		    th_json_put(f, "parameters",
		                schema != NULL ? json_object_get(schema)
		                               : json_tokener_parse("{\"type\":\"object\"}")))
			return -1;
	}
	return 0;
}

/* The request body; the caller puts it. NULL when out of memory. */
static json_object *request_json(const struct th_config *cfg, const struct th_model_input *in)
{
	json_object *req = json_object_new_object(), *msgs = json_object_new_array();
	struct th_buf sys;
	th_buf_init(&sys);
	system_text(in, &sys);
	int bad = req == NULL || msgs == NULL || sys.oom ||
	          th_json_put(req, "model", json_object_new_string(cfg->openai_model)) != 0;
	if (!bad && th_json_put(req, "messages", msgs) != 0)
		bad = 1;
	else if (!bad)
		bad = push_msg(msgs, "system", sys.data) != 0 || add_history(msgs, in) != 0 ||
		      (in->prompt != NULL && push_msg(msgs, "user", in->prompt) != 0) ||
		      add_rounds(msgs, in->rounds) != 0 || add_tools(req, in->tools) != 0;
	else
		json_object_put(msgs);
	th_buf_free(&sys);
	if (bad) {
		json_object_put(req);
		return NULL;
	}
	return req;
}

/* ---- the transfer ------------------------------------------------------------------------- */

struct xfer {
	struct th_buf body;
	int over;
	th_model_cut_fn cut;
	void *cut_arg;
	int was_cut;
	int64_t next_check;
};

static size_t on_data(char *data, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	if (x->body.len + size * n > TH_MODEL_MAX_REPLY) {
		x->over = 1;
		return 0;
	}
	th_buf_append(&x->body, data, size * n);
	return x->body.oom ? 0 : size * n;
}

/* Asks the cut callback at most every TH_MODEL_CUT_POLL_MS; remembers a yes. */
static int cut_now(struct xfer *x)
{
	if (x->was_cut || x->cut == NULL)
		return x->was_cut;
	int64_t now = th_mono_ms();
	if (now < x->next_check)
		return 0;
	x->next_check = now + TH_MODEL_CUT_POLL_MS;
	x->was_cut = x->cut(x->cut_arg) != 0;
	return x->was_cut;
}

static int on_progress(void *arg, curl_off_t dlt, curl_off_t dln, curl_off_t ult, curl_off_t uln)
{
	(void)dlt;
	(void)dln;
	(void)ult;
	(void)uln;
	return cut_now(arg); /* non-zero aborts the transfer */
}

static int add_header(struct curl_slist **list, const char *line)
{
	struct curl_slist *l = curl_slist_append(*list, line);
	if (l == NULL)
		return -1;
	*list = l;
	return 0;
}

/* What the API said went wrong: error.message, error, message, or the body's start. */
static void api_error(const struct th_buf *body, char *out, size_t size)
{
	json_object *v = NULL;
	out[0] = '\0';
	if (body->len > 0 &&
	    th_json_parse(body->data, body->len, TH_MODEL_JSON_DEPTH, &v, NULL) == TH_OK) {
		json_object *err = json_object_object_get(v, "error");
		const char *m = th_json_str(err, "message");
		if (m == NULL && json_object_is_type(err, json_type_string))
			m = json_object_get_string(err);
		if (m == NULL)
			m = th_json_str(v, "message");
		if (m != NULL)
			snprintf(out, size, "%.300s", m);
	}
	json_object_put(v);
	if (out[0] == '\0' && body->len > 0) {
		size_t n = 0;
		while (n < body->len && n < 200 && body->data[n] != '\n' && n + 1 < size)
			n++;
		memcpy(out, body->data, n);
		out[n] = '\0';
	}
}

/* ---- the reply ---------------------------------------------------------------------------- */

/* A tool call of the Chat Completions format, {"id","function":{"name","arguments"}},
 * as {"id","name","arguments": object}. Arguments that are not a JSON object arrive as
 * {"_unparsed_arguments": "<the text>"}, which no intrinsic's schema accepts, so the
 * model gets an error result rather than the turn failing (TURN-3). */
static th_err add_api_call(json_object *calls, json_object *c, size_t i, const char *who,
                           struct th_error *e)
{
	json_object *f = json_object_object_get(c, "function");
	json_object *args = json_object_object_get(f, "arguments");
	json_object *parsed = NULL;
	if (json_object_is_type(args, json_type_object)) {
		parsed = json_object_get(args);
	} else if (json_object_is_type(args, json_type_string)) {
		const char *s = json_object_get_string(args);
		size_t n = (size_t)json_object_get_string_len(args);
		size_t k = 0;
		while (k < n && (s[k] == ' ' || s[k] == '\n' || s[k] == '\t' || s[k] == '\r'))
			k++;
		if (k == n)
			parsed = json_object_new_object();
		else if (th_json_parse(s, n, TH_MODEL_JSON_DEPTH, &parsed, NULL) != TH_OK ||
		         !json_object_is_type(parsed, json_type_object)) {
			json_object_put(parsed);
			parsed = json_object_new_object();
			if (parsed != NULL &&
			    th_json_put(parsed, "_unparsed_arguments",
			                json_object_new_string_len(s, (int)n)) != 0) {
				json_object_put(parsed);
				parsed = NULL;
			}
		}
	} else {
		parsed = json_object_new_object();
	}
	json_object *norm = json_object_new_object();
	json_object *id = json_object_object_get(c, "id");
	json_object *name = json_object_object_get(f, "name");
	if (parsed == NULL || norm == NULL) {
		json_object_put(parsed);
		json_object_put(norm);
		return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	if ((id != NULL && th_json_put(norm, "id", json_object_get(id)) != 0) ||
	    (name != NULL && th_json_put(norm, "name", json_object_get(name)) != 0) ||
	    th_json_put(norm, "arguments", parsed) != 0) {
		json_object_put(norm);
		return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	th_err rc = th_model_add_call(calls, norm, i, who, e);
	json_object_put(norm);
	return rc;
}

/* choices[0].message.content into text (*has_text = 1 when there was any): a string, or
 * the text of each part as some servers send it ([{"type":"text","text":"…"}]). */
static th_err read_content(const char *who, json_object *content, struct th_buf *text,
                           int *has_text, struct th_error *e)
{
	*has_text = 0;
	if (json_object_is_type(content, json_type_string)) {
		th_buf_puts(text, json_object_get_string(content));
		*has_text = 1;
	} else if (json_object_is_type(content, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(content); i++) {
			const char *t = th_json_str(json_object_array_get_idx(content, i), "text");
			if (t != NULL) {
				th_buf_puts(text, t);
				*has_text = 1;
			}
		}
	} else if (content != NULL) {
		return th_error_set(e, TH_EINTERNAL,
		                    "%s: choices[0].message.content is not a string", who);
	}
	return TH_OK;
}

static th_err parse_reply(const char *who, const struct th_buf *body, struct th_model_output *out,
                          struct th_error *e)
{
	json_object *v = NULL;
	struct th_error pe;
	th_error_clear(&pe);
	if (body->len == 0)
		return th_error_set(e, TH_EINTERNAL, "%s answered with an empty body", who);
	if (th_json_parse(body->data, body->len, TH_MODEL_JSON_DEPTH, &v, &pe) != TH_OK)
		return th_error_set(e, TH_EINTERNAL,
		                    "%s answered with something that is not JSON: %s", who, pe.msg);
	th_err rc = TH_OK;
	json_object *choices = json_object_object_get(v, "choices");
	json_object *msg = json_object_object_get(
	    json_object_array_get_idx(
	        json_object_is_type(choices, json_type_array) ? choices : NULL, 0),
	    "message");
	if (!json_object_is_type(msg, json_type_object)) {
		char why[320];
		api_error(body, why, sizeof why);
		rc = th_error_set(e, TH_EINTERNAL, "%s answered without choices[0].message%s%s",
		                  who, why[0] ? ": " : "", why);
		goto done;
	}
	json_object *calls = json_object_object_get(msg, "tool_calls");
	struct th_buf text;
	th_buf_init(&text);
	int has_text = 0;
	if ((rc = read_content(who, json_object_object_get(msg, "content"), &text, &has_text, e)) !=
	    TH_OK) {
		th_buf_free(&text);
		goto done;
	}
	if (calls != NULL && !json_object_is_type(calls, json_type_array)) {
		th_buf_free(&text);
		rc = th_error_set(e, TH_EINTERNAL,
		                  "%s: choices[0].message.tool_calls is not an array", who);
		goto done;
	}
	size_t ncalls = calls != NULL ? json_object_array_length(calls) : 0;
	if (ncalls > 0 && (out->tool_calls = json_object_new_array()) == NULL)
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	for (size_t i = 0; rc == TH_OK && i < ncalls; i++)
		rc = add_api_call(out->tool_calls, json_object_array_get_idx(calls, i), i, who, e);
	/* With tool calls, an empty content is no reply; without, it is an empty one. */
	if (rc == TH_OK && has_text && (text.len > 0 || ncalls == 0)) {
		out->text = text.len > 0 ? th_buf_take(&text) : strdup("");
		if (out->text == NULL)
			rc = th_error_set(e, TH_ENOMEM, "out of memory");
	}
	if (rc == TH_OK && text.oom)
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	th_buf_free(&text);
	if (rc == TH_OK && out->text == NULL && ncalls == 0) {
		const char *fin =
		    th_json_str(json_object_array_get_idx(choices, 0), "finish_reason");
		rc = th_error_set(
		    e, TH_EINTERNAL,
		    "%s answered with neither content nor tool_calls (finish_reason %s)", who,
		    fin ? fin : "none");
	}
done:
	if (rc != TH_OK)
		th_model_output_free(out);
	json_object_put(v);
	return rc;
}

/* The request's headers into *hdr (curl_slist_free_all): JSON both ways, and the API key
 * from the environment variable cfg names, if set (its copy is wiped). -1 when out of
 * memory. */
static int request_headers(const struct th_config *cfg, struct curl_slist **hdr)
{
	if (add_header(hdr, "Content-Type: application/json") != 0 ||
	    add_header(hdr, "Accept: application/json") != 0)
		return -1;
	const char *key = getenv(cfg->openai_api_key_env);
	if (key == NULL || *key == '\0')
		return 0;
	struct th_buf a;
	th_buf_init(&a);
	th_buf_printf(&a, "Authorization: Bearer %s", key);
	int bad = a.oom || add_header(hdr, a.data) != 0;
	if (a.data != NULL)
		explicit_bzero(a.data, a.len);
	th_buf_free(&a);
	return bad ? -1 : 0;
}

/* Runs h on m until it ends or the turn is cut (x->was_cut); the transfer's result. */
static CURLcode run_cuttable(CURLM *m, CURL *h, struct xfer *x)
{
	int running = 1;
	CURLcode res = CURLE_OK;
	while (running) {
		if (curl_multi_perform(m, &running) != CURLM_OK) {
			res = CURLE_FAILED_INIT;
			break;
		}
		if (!running || cut_now(x))
			break;
		curl_multi_poll(m, NULL, 0, TH_MODEL_CUT_POLL_MS, NULL);
	}
	CURLMsg *msg;
	int left;
	while (!running && (msg = curl_multi_info_read(m, &left)) != NULL)
		if (msg->msg == CURLMSG_DONE && msg->easy_handle == h)
			res = msg->data.result;
	return res;
}

/* What the endpoint's answer means for the turn: cut, a failure naming why, or the
 * parsed reply in out. */
static th_err outcome(const struct th_config *cfg, const char *who, struct xfer *x, CURLcode res,
                      long status, struct th_model_output *out, struct th_error *e)
{
	char why[320];
	if (x->was_cut) {
		out->cut = 1;
		return TH_OK;
	}
	if (x->body.oom)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	if (x->over)
		return th_error_set(e, TH_EINTERNAL, "%s answered with more than %d bytes", who,
		                    TH_MODEL_MAX_REPLY);
	if (res == CURLE_OPERATION_TIMEDOUT)
		return th_error_set(e, TH_EINTERNAL,
		                    "%s did not answer within %d ms (model_timeout_ms)", who,
		                    cfg->model_timeout_ms);
	if (res != CURLE_OK)
		return th_error_set(e, TH_EINTERNAL, "%s: %s", who, curl_easy_strerror(res));
	if (status < 200 || status > 299) {
		api_error(&x->body, why, sizeof why);
		return th_error_set(e, TH_EINTERNAL, "%s answered HTTP %ld%s%s", who, status,
		                    why[0] ? ": " : "", why);
	}
	return parse_reply(who, &x->body, out, e);
}

th_err th_model_openai(const struct th_config *cfg, const struct th_model_input *in,
                       th_model_cut_fn cut, void *cut_arg, struct th_model_output *out,
                       struct th_error *e)
{
	if (cfg->openai_base_url == NULL || cfg->openai_model == NULL)
		return th_error_set(e, TH_EINTERNAL,
		                    "model = openai needs openai_base_url and openai_model");
	char url[2048], who[2100];
	if ((size_t)snprintf(url, sizeof url, "%s/chat/completions", cfg->openai_base_url) >=
	    sizeof url)
		return th_error_set(e, TH_EINTERNAL, "openai_base_url is too long");
	snprintf(who, sizeof who, "model endpoint %s", url);
	json_object *req = request_json(cfg, in);
	if (req == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");

	struct xfer x = {.cut = cut, .cut_arg = cut_arg};
	th_buf_init(&x.body);
	struct curl_slist *hdr = NULL;
	CURL *h = curl_easy_init();
	CURLM *m = curl_multi_init();
	th_err rc = TH_OK;
	if (h == NULL || m == NULL || request_headers(cfg, &hdr) != 0) {
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
		goto done;
	}
	th_curl_post(h, url, hdr, th_json_text(req), (long)cfg->model_timeout_ms);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, &x);
	if (curl_multi_add_handle(m, h) != CURLM_OK) {
		rc = th_error_set(e, TH_EINTERNAL, "%s: cannot start the request", who);
		goto done;
	}
	CURLcode res = run_cuttable(m, h, &x);
	curl_multi_remove_handle(m, h);
	long status = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	rc = outcome(cfg, who, &x, res, status, out, e);
done:
	if (m != NULL)
		curl_multi_cleanup(m);
	if (h != NULL)
		curl_easy_cleanup(h);
	curl_slist_free_all(hdr);
	th_buf_free(&x.body);
	json_object_put(req);
	return rc;
}
