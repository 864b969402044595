/* SPDX-License-Identifier: Apache-2.0 */
/* a2ui_dump — prints what the A2UI module emits, for tests/contract/a2ui_schema.mjs, which
 * validates it against the official A2UI 0.9 schemas (UI-1, UI-4).
 *
 *   a2ui_dump emitted        one JSON object: the confirm surface (v0.9 and v0.9.1), sample
 *                            surfaces that passed th_a2ui_apply, an artifact, the registry
 *                            they left, and the module's catalog tables
 *   a2ui_dump apply FILE...  runs th_a2ui_apply on each file (a JSON array of messages, or an
 *                            official example {"messages": [...]}) with a fresh registry and
 *                            prints one line {"file", "ok", "error"} per file
 *   a2ui_dump action FILE... reads each file as an A2A part a client sent, runs
 *                            th_a2ui_parse_client and th_a2ui_check_action on every action in it
 *                            against a registry holding the confirm surface "confirm-1" and the
 *                            "form" sample, and prints one line {"file", "ok", "error"} per file
 *
 * Exits 1 when a built-in sample is refused or on any I/O or allocation failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a2ui/a2ui.h"
#include "a2ui/a2ui_int.h"
#include "util/jsonx.h"

/* Sample surfaces covering every basic component, bindings, function calls, checks, templates
 * and the other message kinds. */
static const char *const samples[][2] = {
    {"form",
     "[{\"version\":\"v0.9\",\"createSurface\":{\"surfaceId\":\"form\",\"catalogId\":"
     "\"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json\",\"theme\":"
     "{\"primaryColor\":\"#3366CC\",\"agentDisplayName\":\"tiny-harness\",\"iconUrl\":"
     "\"https://example.org/icon.png\"},\"sendDataModel\":true}},"
     "{\"version\":\"v0.9\",\"updateComponents\":{\"surfaceId\":\"form\",\"components\":["
     "{\"id\":\"root\",\"component\":\"Card\",\"child\":\"col\"},"
     "{\"id\":\"col\",\"component\":\"Column\",\"children\":[\"title\",\"tabs\",\"send\"],"
     "\"justify\":\"start\",\"align\":\"stretch\"},"
     "{\"id\":\"title\",\"component\":\"Text\",\"text\":{\"call\":\"formatString\",\"args\":"
     "{\"value\":\"Order ${/order/id}\"},\"returnType\":\"string\"},\"variant\":\"h2\","
     "\"accessibility\":{\"label\":\"Title\"}},"
     "{\"id\":\"tabs\",\"component\":\"Tabs\",\"tabs\":[{\"title\":\"Details\",\"child\":"
     "\"details\"},{\"title\":{\"path\":\"/tab2\"},\"child\":\"media\"}]},"
     "{\"id\":\"details\",\"component\":\"Column\",\"children\":[\"name\",\"agree\",\"size\","
     "\"qty\",\"when\",\"items\"]},"
     "{\"id\":\"name\",\"component\":\"TextField\",\"label\":\"Name\",\"value\":{\"path\":"
     "\"/order/name\"},\"variant\":\"shortText\",\"weight\":1,\"checks\":[{\"condition\":"
     "{\"call\":\"required\",\"args\":{\"value\":{\"path\":\"/order/name\"}}},\"message\":"
     "\"Name is required\"},{\"condition\":{\"call\":\"length\",\"args\":{\"value\":{\"path\":"
     "\"/order/name\"},\"max\":40}},\"message\":\"Too long\"}]},"
     "{\"id\":\"agree\",\"component\":\"CheckBox\",\"label\":\"I agree\",\"value\":{\"path\":"
     "\"/order/agree\"}},"
     "{\"id\":\"size\",\"component\":\"ChoicePicker\",\"label\":\"Size\",\"options\":[{\"label\":"
     "\"Small\",\"value\":\"s\"},{\"label\":\"Large\",\"value\":\"l\"}],\"value\":{\"path\":"
     "\"/order/size\"},\"variant\":\"mutuallyExclusive\",\"displayStyle\":\"chips\","
     "\"filterable\":false},"
     "{\"id\":\"qty\",\"component\":\"Slider\",\"label\":\"Quantity\",\"min\":1,\"max\":10,"
     "\"value\":{\"path\":\"/order/qty\"}},"
     "{\"id\":\"when\",\"component\":\"DateTimeInput\",\"value\":{\"path\":\"/order/when\"},"
     "\"enableDate\":true,\"enableTime\":false,\"min\":\"2026-01-01\",\"label\":\"Date\"},"
     "{\"id\":\"items\",\"component\":\"List\",\"children\":{\"componentId\":\"item\",\"path\":"
     "\"/order/items\"},\"direction\":\"vertical\"},"
     "{\"id\":\"item\",\"component\":\"Text\",\"text\":{\"path\":\"label\"}},"
     "{\"id\":\"media\",\"component\":\"Row\",\"children\":[\"pic\",\"icon\",\"clip\",\"tune\","
     "\"rule\",\"more\"],\"justify\":\"spaceBetween\",\"align\":\"center\"},"
     "{\"id\":\"pic\",\"component\":\"Image\",\"url\":\"https://example.org/a.png\","
     "\"fit\":\"cover\",\"variant\":\"avatar\",\"description\":\"A picture\"},"
     "{\"id\":\"icon\",\"component\":\"Icon\",\"name\":\"shoppingCart\"},"
     "{\"id\":\"clip\",\"component\":\"Video\",\"url\":{\"path\":\"/media/video\"}},"
     "{\"id\":\"tune\",\"component\":\"AudioPlayer\",\"url\":\"https://example.org/a.ogg\","
     "\"description\":\"A tune\"},"
     "{\"id\":\"rule\",\"component\":\"Divider\",\"axis\":\"vertical\"},"
     "{\"id\":\"more\",\"component\":\"Modal\",\"trigger\":\"more_btn\",\"content\":"
     "\"more_text\"},"
     "{\"id\":\"more_btn\",\"component\":\"Button\",\"child\":\"more_label\",\"variant\":"
     "\"borderless\",\"action\":{\"functionCall\":{\"call\":\"openUrl\",\"args\":{\"url\":"
     "\"https://example.org/help\"},\"returnType\":\"void\"}}},"
     "{\"id\":\"more_label\",\"component\":\"Icon\",\"name\":{\"path\":\"/icons/help\"}},"
     "{\"id\":\"more_text\",\"component\":\"Text\",\"text\":\"More\",\"variant\":\"caption\"},"
     "{\"id\":\"send\",\"component\":\"Button\",\"child\":\"send_label\",\"variant\":"
     "\"primary\",\"checks\":[{\"condition\":{\"call\":\"and\",\"args\":{\"values\":[{\"path\":"
     "\"/order/agree\"},{\"call\":\"not\",\"args\":{\"value\":false}}]}},\"message\":"
     "\"Agree first\"}],\"action\":{\"event\":{\"name\":\"place_order\",\"context\":{\"qty\":"
     "{\"path\":\"/order/qty\"},\"sku\":\"A-17\",\"n\":3,\"gift\":false,\"tags\":[\"x\"]}}}},"
     "{\"id\":\"send_label\",\"component\":\"Text\",\"text\":\"Place order\"}]}},"
     "{\"version\":\"v0.9\",\"updateDataModel\":{\"surfaceId\":\"form\",\"path\":\"/order\","
     "\"value\":{\"id\":\"17\",\"qty\":1,\"items\":[{\"label\":\"one\"}]}}},"
     "{\"version\":\"v0.9\",\"updateDataModel\":{\"surfaceId\":\"form\",\"path\":"
     "\"/order/old\"}}]"},
    {"lifecycle",
     "[{\"version\":\"v0.9\",\"createSurface\":{\"surfaceId\":\"gone\",\"catalogId\":"
     "\"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json\"}},"
     "{\"version\":\"v0.9\",\"updateComponents\":{\"surfaceId\":\"gone\",\"components\":["
     "{\"id\":\"root\",\"component\":\"Text\",\"text\":\"bye\"}]}},"
     "{\"version\":\"v0.9\",\"updateDataModel\":{\"surfaceId\":\"gone\",\"value\":{}}},"
     "{\"version\":\"v0.9\",\"deleteSurface\":{\"surfaceId\":\"gone\"}}]"},
};

static int emit(void)
{
	struct th_error e = {0};
	json_object *out = json_object_new_object();
	json_object *registry = json_object_new_object();
	json_object *sample_out = json_object_new_object();
	if (out == NULL || registry == NULL || sample_out == NULL)
		return 1;
	json_object_object_add(out, "samples", sample_out);
	struct th_a2ui_opts opts = {TH_A2UI_VERSION, 0};

	json_object *confirm = th_a2ui_confirm_surface("confirm-1", "Deploy to production?", NULL);
	if (confirm == NULL || th_a2ui_apply(registry, confirm, &opts, &e) != TH_OK) {
		fprintf(stderr, "a2ui_dump: confirm surface refused: %s\n", e.msg);
		return 1;
	}
	json_object_object_add(out, "confirm", confirm);
	json_object_object_add(out, "artifact", th_a2ui_artifact(1, confirm));

	json_object *confirm091 = th_a2ui_confirm_surface("confirm-2", "Proceed?", "v0.9.1");
	struct th_a2ui_opts opts091 = {TH_A2UI_VERSION_091, 0};
	if (confirm091 == NULL || th_a2ui_apply(registry, confirm091, &opts091, &e) != TH_OK) {
		fprintf(stderr, "a2ui_dump: v0.9.1 confirm surface refused: %s\n", e.msg);
		return 1;
	}
	json_object_object_add(out, "confirm091", confirm091);

	for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
		json_object *msgs = NULL;
		if (th_json_parse(samples[i][1], strlen(samples[i][1]), 64, &msgs, &e) != TH_OK ||
		    th_a2ui_apply(registry, msgs, &opts, &e) != TH_OK) {
			fprintf(stderr, "a2ui_dump: sample %s refused: %s\n", samples[i][0], e.msg);
			return 1;
		}
		json_object_object_add(sample_out, samples[i][0], msgs);
	}
	json_object_object_add(out, "registry", registry);
	json_object_object_add(out, "catalog", th_a2ui_catalog_json());
	printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PRETTY |
	                                                       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(out);
	return 0;
}

/* Parses the file at path into *doc; 1 on I/O failure (reported), 0 otherwise (rc tells). */
static int read_json(const char *path, json_object **doc, th_err *rc, struct th_error *e)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		perror(path);
		return 1;
	}
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len + 4096 > cap) {
			char *nb = realloc(buf, cap = cap * 2 + 8192);
			if (nb == NULL) {
				free(buf);
				fclose(f);
				return 1;
			}
			buf = nb;
		}
		size_t r = fread(buf + len, 1, cap - len, f);
		len += r;
		if (r == 0)
			break;
	}
	fclose(f);
	*rc = th_json_parse(buf, len, 128, doc, e);
	free(buf);
	return 0;
}

static void print_result(const char *path, th_err rc, const struct th_error *e)
{
	json_object *line = json_object_new_object();
	if (line == NULL)
		return;
	json_object_object_add(line, "file", json_object_new_string(path));
	json_object_object_add(line, "ok", json_object_new_boolean(rc == TH_OK));
	json_object_object_add(line, "error", json_object_new_string(rc == TH_OK ? "" : e->msg));
	printf("%s\n", th_json_text(line));
	json_object_put(line);
}

static int apply_file(const char *path)
{
	struct th_error e = {0};
	json_object *doc = NULL, *registry = json_object_new_object();
	th_err rc = TH_OK;
	if (registry == NULL || read_json(path, &doc, &rc, &e) != 0) {
		json_object_put(registry);
		return 1;
	}
	json_object *msgs = doc, *wrapped = NULL;
	if (rc == TH_OK && json_object_is_type(doc, json_type_object) &&
	    json_object_object_get_ex(doc, "messages", &wrapped))
		msgs = wrapped;
	if (rc == TH_OK)
		rc = th_a2ui_apply(registry, msgs, NULL, &e);
	print_result(path, rc, &e);
	json_object_put(doc);
	json_object_put(registry);
	return 0;
}

static int action_file(const char *path)
{
	struct th_error e = {0};
	json_object *registry = json_object_new_object(), *part = NULL, *form = NULL;
	json_object *confirm = th_a2ui_confirm_surface("confirm-1", "Deploy to production?", NULL);
	th_err rc = TH_OK;
	if (registry == NULL || confirm == NULL ||
	    th_a2ui_apply(registry, confirm, NULL, &e) != TH_OK ||
	    th_json_parse(samples[0][1], strlen(samples[0][1]), 64, &form, &e) != TH_OK ||
	    th_a2ui_apply(registry, form, NULL, &e) != TH_OK || read_json(path, &part, &rc, &e)) {
		fprintf(stderr, "a2ui_dump: cannot set up: %s\n", e.msg);
		json_object_put(registry);
		json_object_put(confirm);
		json_object_put(form);
		return 1;
	}
	json_object *msgs = NULL;
	if (rc == TH_OK)
		rc = th_a2ui_parse_client(part, &msgs, &e);
	for (size_t i = 0; rc == TH_OK && i < json_object_array_length(msgs); i++) {
		json_object *m = json_object_array_get_idx(msgs, i);
		if (json_object_object_get_ex(m, "action", NULL))
			rc = th_a2ui_check_action(registry, m, &e);
	}
	print_result(path, rc, &e);
	json_object_put(msgs);
	json_object_put(part);
	json_object_put(form);
	json_object_put(confirm);
	json_object_put(registry);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "emitted") == 0)
		return emit();
	if (argc >= 2 && strcmp(argv[1], "apply") == 0) {
		int rc = 0;
		for (int i = 2; i < argc; i++)
			rc |= apply_file(argv[i]);
		return rc;
	}
	if (argc >= 2 && strcmp(argv[1], "action") == 0) {
		int rc = 0;
		for (int i = 2; i < argc; i++)
			rc |= action_file(argv[i]);
		return rc;
	}
	fprintf(stderr, "usage: a2ui_dump emitted | apply FILE... | action FILE...\n");
	return 2;
}
