/* SPDX-License-Identifier: Apache-2.0 */
/* card.c — the public AgentCard (CARD-1..CARD-3).
 *
 * The card is the contract a client discovers first, and tests/contract pins it byte for
 * byte (after canonicalisation), so everything here is deterministic: fixed key order,
 * no timestamps, nothing read from the environment except through cfg. */
#include "config.h"

#include "service/card.h"

#include <assert.h>

#include "domain/ext.h"
#include "util/jsonx.h"

#define A2UI_BASIC_CATALOG "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"

/* The media types of CARD-3. Input and output are the same five: the harness emits event
 * envelopes of its own (TASK-8), so a client must be told it may receive them. */
static const char *const media_types[] = {
    "text/plain", TH_MT_TASK, TH_MT_CHANNEL, TH_MT_EVENT, TH_MT_A2UI,
};

#define N_MEDIA_TYPES (sizeof(media_types) / sizeof(media_types[0]))

/* Descriptions of the five extensions, in the card order of domain/ext.c (CARD-2). */
static const char *const ext_descriptions[TH_EXT_COUNT] = {
    "tiny-harness tasks: name, goal, acceptance criteria, participants, plan and sub-task "
    "links in Task.metadata; event envelopes (task, control and harness events) as "
    "application/vnd.tiny-harness.event+json data parts",
    "tiny-harness channels between participants: messages, help requests and help replies as "
    "application/vnd.tiny-harness.channel+json data parts",
    "why a task is TASK_STATE_INPUT_REQUIRED: sub_state awaiting-next-message or "
    "awaiting-answer in Task.metadata and in the status update's metadata; needs no activation",
    "the registered slash commands (name, description, argument hint) in this extension's "
    "params, for clients to offer as completions; a command runs whenever its text arrives",
    "A2UI 0.9.1 surfaces streamed as application/a2ui+json artifact parts and user actions "
    "sent back as the same media type; basic catalog only, no inline catalogs",
};

static int push(json_object *arr, json_object *v)
{
	if (arr == NULL || v == NULL) {
		json_object_put(v);
		return -1;
	}
	if (json_object_array_add(arr, v) != 0) {
		json_object_put(v);
		return -1;
	}
	return 0;
}

static int put_str(json_object *obj, const char *key, const char *s)
{
	return th_json_put(obj, key, json_object_new_string(s));
}

static json_object *string_array(const char *const *items, size_t n)
{
	json_object *arr = json_object_new_array_ext((int)n);
	if (arr == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (push(arr, json_object_new_string(items[i])) != 0) {
			json_object_put(arr);
			return NULL;
		}
	}
	return arr;
}

static json_object *interface(const char *url, const char *binding)
{
	json_object *o = json_object_new_object();
	int rc = 0;
	rc |= put_str(o, "url", url);
	rc |= put_str(o, "protocolBinding", binding);
	rc |= put_str(o, "protocolVersion", "1.0");
	if (rc != 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* The commands extension carries the registry verbatim; a copy keeps the card independent
 * of the registry's lifetime (the card is built once and served for the whole process). */
static json_object *commands_params(json_object *commands)
{
	json_object *copy = NULL;
	if (commands != NULL && json_object_is_type(commands, json_type_array)) {
		if (json_object_deep_copy(commands, &copy, NULL) != 0)
			return NULL;
	} else {
		copy = json_object_new_array();
	}
	json_object *params = json_object_new_object();
	if (th_json_put(params, "commands", copy) != 0) {
		json_object_put(params);
		return NULL;
	}
	return params;
}

static json_object *a2ui_params(void)
{
	static const char *const catalogs[] = {A2UI_BASIC_CATALOG};
	json_object *params = json_object_new_object();
	int rc = 0;
	rc |= th_json_put(params, "supportedCatalogIds", string_array(catalogs, 1));
	rc |= th_json_put(params, "acceptsInlineCatalogs", json_object_new_boolean(0));
	if (rc != 0) {
		json_object_put(params);
		return NULL;
	}
	return params;
}

/* `required` is left out rather than written as false: ProtoJSON omits default values,
 * and the SDKs compare cards in that form. */
static json_object *extension(int i, json_object *commands)
{
	json_object *o = json_object_new_object();
	int rc = 0;
	rc |= put_str(o, "uri", th_ext_uri(i));
	assert(i >= 0 && (size_t)i < sizeof ext_descriptions / sizeof ext_descriptions[0]);
	rc |= put_str(o, "description", ext_descriptions[i]);
	if ((1u << i) == TH_EXT_COMMANDS)
		rc |= th_json_put(o, "params", commands_params(commands));
	else if ((1u << i) == TH_EXT_A2UI)
		rc |= th_json_put(o, "params", a2ui_params());
	if (rc != 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* One SecurityScheme of A2A 1.0 (a oneof keyed by its kind): an HTTP authentication
 * scheme, with bearerFormat when format is not NULL. */
static json_object *http_scheme(const char *scheme, const char *format, const char *desc)
{
	json_object *o = json_object_new_object(), *h = json_object_new_object();
	int rc = put_str(h, "scheme", scheme);
	if (format != NULL)
		rc |= put_str(h, "bearerFormat", format);
	rc |= put_str(h, "description", desc);
	rc |= th_json_put(o, "httpAuthSecurityScheme", h);
	if (rc != 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* {"schemes": {name: {}}}: one way of authenticating that suffices alone. The scopes
 * (StringList.list) are empty, and an empty repeated field is a default value that
 * ProtoJSON omits: A2A §8.4.1 removes it before canonicalising, so a card that carried
 * it would not be the card its signature covers (CARD-SIG-1). */
static json_object *requirement(const char *name)
{
	json_object *o = json_object_new_object(), *schemes = json_object_new_object();
	int rc = th_json_put(schemes, name, json_object_new_object());
	rc |= th_json_put(o, "schemes", schemes);
	if (rc != 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* SEC-1: the card says what the deployment requires. identity = header declares nothing
 * (a trusted perimeter, the default card unchanged); remote_user is the web server's
 * HTTP authentication (Basic in the shipped recipes); bearer takes a JWT when keys for
 * one are configured, and API keys always, both as Authorization: Bearer. Each
 * requirement alone suffices. */
static int add_security(json_object *card, const struct th_config *cfg)
{
	if (cfg->identity == TH_IDENTITY_HEADER)
		return 0;
	json_object *schemes = json_object_new_object(), *reqs = json_object_new_array();
	int rc = 0;
	if (cfg->identity == TH_IDENTITY_REMOTE_USER) {
		rc |= th_json_put(
		    schemes, "basic",
		    http_scheme("Basic", NULL, "the web server authenticates the participant"));
		rc |= push(reqs, requirement("basic"));
	} else {
		if (cfg->jwt_secret_file != NULL || cfg->jwt_secret_env != NULL ||
		    cfg->jwt_jwks_file != NULL) {
			rc |=
			    th_json_put(schemes, "bearer",
			                http_scheme("Bearer", "JWT",
			                            "a JWT; the participant is its claim named by "
			                            "jwt_claim"));
			rc |= push(reqs, requirement("bearer"));
		}
		rc |= th_json_put(schemes, "apiKey",
		                  http_scheme("Bearer", NULL,
		                              "an API key made with tiny-harness keys add, sent as "
		                              "Authorization: Bearer"));
		rc |= push(reqs, requirement("apiKey"));
	}
	rc |= th_json_put(card, "securitySchemes", schemes);
	rc |= th_json_put(card, "securityRequirements", reqs);
	return rc;
}

static json_object *capabilities(json_object *commands, int authenticated)
{
	json_object *o = json_object_new_object();
	json_object *exts = json_object_new_array_ext(TH_EXT_COUNT);
	int rc = 0;
	for (int i = 0; i < TH_EXT_COUNT && rc == 0; i++)
		rc |= push(exts, extension(i, commands));
	rc |= th_json_put(o, "streaming", json_object_new_boolean(1));
	rc |= th_json_put(o, "pushNotifications", json_object_new_boolean(1));
	/* SEC-1: an authenticated caller may ask for the extended card. */
	if (authenticated)
		rc |= th_json_put(o, "extendedAgentCard", json_object_new_boolean(1));
	rc |= th_json_put(o, "extensions", exts);
	if (rc != 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* A2A requires at least one skill; the harness has one, doing whatever the task asks. */
static json_object *skills(void)
{
	static const char *const tags[] = {
	    "tasks", "planning", "sub-tasks", "participants", "channels", "slash-commands", "a2ui",
	};
	json_object *skill = json_object_new_object();
	int rc = 0;
	rc |= put_str(skill, "id", "harness");
	rc |= put_str(skill, "name", "Task harness");
	rc |=
	    put_str(skill, "description",
	            "Works on a task together with its participants: keeps its goal, acceptance "
	            "criteria, plan and sub-tasks, asks participants for help, runs slash commands "
	            "and shows UI surfaces. The task waits for the next message after every turn "
	            "until a participant completes it.");
	rc |= th_json_put(skill, "tags", string_array(tags, sizeof(tags) / sizeof(tags[0])));
	json_object *arr = json_object_new_array_ext(1);
	if (rc != 0) {
		json_object_put(skill);
		json_object_put(arr);
		return NULL;
	}
	if (push(arr, skill) != 0) {
		json_object_put(arr);
		return NULL;
	}
	return arr;
}

json_object *th_card_build(const struct th_config *cfg, json_object *commands)
{
	if (cfg == NULL || cfg->base_url == NULL)
		return NULL;
	json_object *card = json_object_new_object();
	json_object *ifaces = json_object_new_array_ext(2);
	int rc = 0;
	/* Both bindings share one URL: JSON-RPC is a POST to it, HTTP+JSON routes hang below it. */
	rc |= push(ifaces, interface(cfg->base_url, "JSONRPC"));
	rc |= push(ifaces, interface(cfg->base_url, "HTTP+JSON"));
	rc |= put_str(card, "name", "tiny-harness");
	rc |=
	    put_str(card, "description",
	            "A tiny agent harness: tasks with goals, participants and roles, plans, "
	            "sub-tasks, channels and help requests, slash commands and A2UI surfaces over "
	            "A2A, kept in SQLite");
	rc |= put_str(card, "version", PACKAGE_VERSION);
	rc |= th_json_put(card, "supportedInterfaces", ifaces);
	rc |= th_json_put(card, "capabilities",
	                  capabilities(commands, cfg->identity != TH_IDENTITY_HEADER));
	rc |= th_json_put(card, "defaultInputModes", string_array(media_types, N_MEDIA_TYPES));
	rc |= th_json_put(card, "defaultOutputModes", string_array(media_types, N_MEDIA_TYPES));
	rc |= th_json_put(card, "skills", skills());
	rc |= add_security(card, cfg);
	if (rc != 0) {
		json_object_put(card);
		return NULL;
	}
	return card;
}
