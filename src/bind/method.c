/* SPDX-License-Identifier: Apache-2.0 */
/* method.c — the method guard of the resources that are only read (the agent card, the
 * web app): GET and HEAD pass, any other method is answered 405 with Allow. */
#include "bind/bind_int.h"

#include <string.h>

int th_bind_get_or_head(struct th_bind_ctx *ctx, const char *what)
{
	ctx->head = strcmp(ctx->req->method, "HEAD") == 0;
	if (strcmp(ctx->req->method, "GET") == 0 || ctx->head)
		return 1;
	struct th_error e;
	char m[40];
	th_bind_quote(m, sizeof m, ctx->req->method);
	th_buf_puts(&ctx->extra, "Allow: GET, HEAD\r\n");
	th_error_set(&e, TH_EMETHOD, "%s is read with GET, not %s", what, m);
	th_bind_rest_error(ctx, 405, &e);
	return 0;
}
