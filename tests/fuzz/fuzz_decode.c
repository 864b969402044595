/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_decode.c — libFuzzer target: arbitrary bytes through the JSON parser and every
 * A2A request decoder (LIM-3: no input crashes a worker). Built by hand with clang; see
 * README.md. Not part of `make check`. */
#include <stddef.h>
#include <stdint.h>

#include "a2a/a2a.h"
#include "util/jsonx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct th_limits lim = {
    .max_parts = 16,
    .max_text = 4096,
    .max_metadata = 1024,
    .max_id = 256,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_object *v = NULL;
	struct th_error e;
	th_error_clear(&e);
	if (th_json_parse((const char *)data, size, 32, &v, &e) != TH_OK)
		return 0;

	struct th_send_req s;
	if (th_a2a_send_decode(v, &lim, &s, &e) == TH_OK) {
		/* A decoded message must survive the path the service gives it: into a
		 * status, a task and out as text. */
		json_object *hist = json_object_new_array();
		if (hist != NULL && json_object_array_add(hist, json_object_get(s.message)) != 0)
			json_object_put(s.message);
		th_a2a_trim_history(hist, s.history_length);
		json_object *t = th_a2a_task("t", "c", th_a2a_status(TH_STATE_WORKING, NULL, 0),
		                             hist, NULL, NULL);
		if (t != NULL)
			(void)th_json_text(t);
		json_object_put(t);
	}
	th_send_req_free(&s);

	struct th_get_req g;
	th_a2a_get_decode(v, &g, &e);
	th_get_req_free(&g);

	struct th_list_req l;
	th_a2a_list_decode(v, &l, &e);
	th_list_req_free(&l);

	struct th_cancel_req c;
	th_a2a_cancel_decode(v, &c, &e);
	th_cancel_req_free(&c);

	json_object *m = NULL;
	th_a2a_message_decode(v, &lim, &m, &e);
	json_object_put(m);

	json_object_put(v);
	return 0;
}
