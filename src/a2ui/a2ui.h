/* SPDX-License-Identifier: Apache-2.0 */
/* a2ui.h — A2UI 0.9 surfaces over A2A (UI-1..UI-4, EXT-4): pure functions over json-c values.
 *
 * No SQL, no HTTP: the harness persists, per task, one JSON object (the surface registry) and
 * hands it to these functions. th_a2ui_apply validates what the server is about to emit and
 * records it in the registry; th_a2ui_parse_client and th_a2ui_check_action validate what a
 * client sends back against that registry.
 *
 * Only the basic catalog (TH_A2UI_BASIC_CATALOG) is supported; inline catalogs are refused in
 * both directions. Outbound messages carry `version` "v0.9" unless the options say "v0.9.1"
 * (the schemas shipped in @a2ui/web_core 0.11 accept only "v0.9"); inbound both are accepted.
 *
 * The surface registry (created by the harness as `{}`; only these functions write it):
 *
 *   {"surfaces": {
 *      "<surfaceId>": {
 *        "catalogId": "<the basic catalog id>",
 *        "sendDataModel": false,
 *        "deleted": false,            true once deleteSurface was emitted; the id stays taken
 *        "components": {              the surface's current components (empty once deleted)
 *          "<componentId>": {
 *            "component": "Button",   the catalog type
 *            "refs": ["label"],       ids it references (child, children, tabs[].child,
 *                                     template componentId, trigger, content)
 *            "event": {               only when it declares action.event
 *              "name": "approve",
 *              "context": {...}       the declared context as sent: literals and
 *            }                        {"path"} / {"call"} bindings
 *          }, ...}
 *      }, ...}}
 *
 * Errors: TH_EINVAL with a message naming the message index, the component id and the rule;
 * TH_ENOMEM on allocation failure; TH_EINTERNAL when the registry itself is malformed. */
#ifndef TH_A2UI_A2UI_H
#define TH_A2UI_A2UI_H

#include <json-c/json.h>

#include "util/err.h"

#define TH_A2UI_BASIC_CATALOG "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
#define TH_A2UI_MEDIA_TYPE "application/a2ui+json"
#define TH_A2UI_MEDIA_TYPE_LEGACY "application/json+a2ui" /* accepted on input only */
#define TH_A2UI_EXT_URI "https://a2ui.org/a2a-extension/a2ui/v0.9.1"
#define TH_A2UI_VERSION "v0.9"
#define TH_A2UI_VERSION_091 "v0.9.1"

/* Caps (the A2UI spec sets none; these are the server's policy, see docs/a2ui.md). */
#define TH_A2UI_MAX_MESSAGES 64          /* messages per th_a2ui_apply call */
#define TH_A2UI_MAX_MESSAGE_BYTES 262144 /* serialised bytes per outbound message */
#define TH_A2UI_MAX_COMPONENTS 1000      /* components per surface */
#define TH_A2UI_MAX_SURFACES 64          /* live surfaces per registry (task) */
#define TH_A2UI_MAX_SURFACE_RECORDS 256  /* live + deleted surfaces per registry */
#define TH_A2UI_MAX_DEPTH 50             /* components on the longest reference chain */
#define TH_A2UI_MAX_CALL_DEPTH 5         /* FunctionCall nesting */
#define TH_A2UI_MAX_ID_BYTES 256         /* surfaceId, component id */
#define TH_A2UI_MAX_NAME_BYTES 128       /* action event name */
#define TH_A2UI_MAX_CLIENT_MESSAGES 16   /* messages per inbound part */
#define TH_A2UI_MAX_CONTEXT_BYTES 16384  /* serialised inbound action context */
#define TH_A2UI_MAX_CONTEXT_KEYS 64      /* keys of an action context (declared or sent) */
#define TH_A2UI_MAX_CLIENT_TEXT 4096     /* bytes of an inbound error message's strings */

/* Action names of the confirm surface (UI-4); their context is always {}. */
#define TH_A2UI_CONFIRM_APPROVE "approve"
#define TH_A2UI_CONFIRM_REJECT "reject"

struct th_a2ui_opts {
	const char
	    *version;     /* "v0.9" (also when NULL) or "v0.9.1": what every message must carry */
	int fill_version; /* when set, a message without `version` is accepted and, on
	                     success, gets the configured one added (emit_ui input) */
};

/* UI-1 outbound. Validates messages (a JSON array of server-to-client A2UI messages) against the
 * basic catalog and the registry's surface state, as one batch: references, root, cycles and
 * depth are checked on each surface's state after the whole batch. On success records the
 * result in registry (in place) and, with fill_version, adds the version to messages lacking
 * it. On failure neither registry nor messages changed. */
th_err th_a2ui_apply(json_object *registry, json_object *messages, const struct th_a2ui_opts *opts,
                     struct th_error *e);

/* True when part (an A2A Part object) is an A2UI data part: `mediaType`, `metadata.mimeType`
 * or a top-level `mimeType` equal to TH_A2UI_MEDIA_TYPE or the legacy type. */
int th_a2ui_is_part(json_object *part);

/* UI-2 inbound. Reads an A2UI data part as real clients send it: `data` an array of messages,
 * one message object, or {"messages": [...]}. Each message must be {version, action} or
 * {version, error} with version "v0.9" or "v0.9.1" and well-formed fields. On success *messages
 * is a new array (caller frees with json_object_put) holding references to the part's message
 * objects. Refuses inline catalogs anywhere in the part (`catalog`/`inlineCatalogs`). */
th_err th_a2ui_parse_client(json_object *part, json_object **messages, struct th_error *e);

/* UI-2/UI-3. Checks one client message (as returned by th_a2ui_parse_client) that carries an
 * `action` against the registry: the surface was created here and is not deleted, the component
 * is on it and declares an action event with exactly that name, the context keys are among the
 * declared ones, declared literals come back unchanged, the context is within the size cap.
 * The reasons in the TH_EINVAL message: "unknown surface", "deleted surface", "unknown
 * component", "no action event", "action name mismatch", "undeclared context key", "context
 * value mismatch", "context too large", "inline catalog", or the malformed field. */
th_err th_a2ui_check_action(json_object *registry, json_object *action_msg, struct th_error *e);

/* UI-4. The messages (createSurface, then updateComponents) of a Card holding question as Text
 * and two Buttons "Approve" / "Reject" with action events TH_A2UI_CONFIRM_APPROVE /
 * TH_A2UI_CONFIRM_REJECT and context {}; component ids: root (Card), body (Column), question
 * (Text), buttons (Row), approve / reject (Button), approve_label / reject_label (Text).
 * version NULL means "v0.9". Returns a new array (caller frees with json_object_put), or NULL
 * when surface_id or question is NULL or empty, or on allocation failure. */
json_object *th_a2ui_confirm_surface(const char *surface_id, const char *question,
                                     const char *version);

/* UI-1. The artifact {artifactId: "a2ui:<n>", name: "a2ui", parts: [{data: messages, mediaType,
 * metadata: {mimeType}}]}. Takes its own reference to messages. Returns a new object (caller
 * frees with json_object_put), or NULL on allocation failure. */
json_object *th_a2ui_artifact(long long n, json_object *messages);

/* EXT-4. Whether the client can render A2UI surfaces: it sent `a2uiClientCapabilities` (in
 * message_metadata, nested {"v0.9": {...}} / {"v0.9.1": {...}} or flat) naming the basic catalog
 * in supportedCatalogIds, or it activated the extension (activated non-zero) and did not send
 * capabilities that leave the basic catalog out. */
int th_a2ui_client_supports(json_object *message_metadata, int activated);

/* UI-2. Refuses (TH_EINVAL "inline catalog") a2uiClientCapabilities carrying inlineCatalogs, and
 * capabilities that are not an object; TH_OK when absent or acceptable. */
th_err th_a2ui_check_capabilities(json_object *message_metadata, struct th_error *e);

#endif
