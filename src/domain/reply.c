/* SPDX-License-Identifier: Apache-2.0 */
#include "domain/reply.h"

#include <stdlib.h>
#include <string.h>

void th_cmd_result_free(struct th_cmd_result *r)
{
	th_buf_free(&r->text);
	json_object_put(r->parts);
	json_object_put(r->sub_ext);
	free(r->child_task);
	memset(r, 0, sizeof *r);
}
