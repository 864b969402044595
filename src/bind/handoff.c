/* SPDX-License-Identifier: Apache-2.0 */
/* handoff.c — which requests a worker hands to its database's writer (HOST-2,
 * decision-084; worker/handoff.c carries them): the operations that write (SendMessage,
 * SendStreamingMessage, CancelTask, creating and deleting a push config). Reads stay
 * where they arrive. */
#include "bind/bind_int.h"

static int writes(int op)
{
	return op == TH_OP_SEND_MESSAGE || op == TH_OP_SEND_STREAMING_MESSAGE ||
	       op == TH_OP_CANCEL_TASK || op == TH_OP_CREATE_PUSH_CONFIG ||
	       op == TH_OP_DELETE_PUSH_CONFIG;
}

int th_bind_handoff(struct th_bind_ctx *ctx, int op)
{
	struct th_handoff *h = ctx->app->handoff;
	if (h == NULL || !writes(op))
		return 0;
	const struct th_http_req *r = ctx->req;
	if (!h->forward(h->impl, ctx->io, r->body != NULL ? r->body : "", r->body_len))
		return 0;
	ctx->handed = 1; /* the writer answers, counts and logs it */
	return 1;
}
