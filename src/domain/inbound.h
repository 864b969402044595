/* SPDX-License-Identifier: Apache-2.0 */
/* inbound.h — what a participant's message carries, read from its parts once (issue 30):
 * the completion control envelope (CTL-1), a task envelope's payload (TASK-3), a channel
 * part (CH-1), the first text part (where a slash command is, CMD-2) and whether it
 * holds A2UI client messages (UI-2). The intake reads this description at every later
 * step, and a turn reads its stored input with it (and, in the same pass, the words it
 * gives the model); nothing else scans message.parts to learn what the message is. What the message
 * means for a task (a decision on a pending card, a built-in command, a surface's action)
 * is asked of the domain and the registry with this description and the store. */
#ifndef TH_DOMAIN_INBOUND_H
#define TH_DOMAIN_INBOUND_H

#include <json-c/json.h>

#include "config/settings.h"
#include "domain/channel.h"
#include "util/buf.h"
#include "util/err.h"

struct th_inbound {
	int control;                 /* 1: {"kind":"control","action":"complete"}, its only
	                                part (CTL-1) */
	json_object *payload;        /* the task envelope's payload, borrowed from the message;
	                                NULL: none (TASK-3) */
	int has_channel;             /* 1: channel describes its channel part (CH-1) */
	struct th_chan_part channel; /* borrowed from the message */
	const char *text;            /* the first text part, borrowed; NULL: no text part */
	int a2ui;                    /* parts carrying A2UI client messages (UI-2) */
	size_t nparts;               /* how many parts the message has */
};

/* Reads msg (an A2A Message already checked against the protocol) sent by sender. 0, or
 * -1 with TH_EINVAL in e naming the part and the field: a malformed event envelope (an
 * unknown kind, a control envelope other than {kind, action: "complete"} or beside other
 * parts, a task envelope other than {kind, payload: {…}}, two task envelopes) or a channel
 * part th_channel_part_read refuses, or two of them. Everything in *out is borrowed from
 * msg and lives as long as it does. words (NULL: not wanted) is appended what a model is
 * given of the message: every part on a line of its own, its text (a channel part's
 * data.text) or, for a part without text, its media type in brackets ("[image/png
 * part]"), so the model sees that something arrived. */
int th_inbound_read(json_object *msg, const char *sender, const struct th_limits *lim,
                    struct th_inbound *out, struct th_buf *words, struct th_error *e);

#endif
