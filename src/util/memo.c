/* SPDX-License-Identifier: Apache-2.0 */
/* memo.c — see memo.h. A handful of slots, reused in turn: a memo serves the few tasks
 * a thread is asked about again and again (clients polling GetTask), not a cache of
 * the database. */
#include "util/memo.h"

#include <stdlib.h>
#include <string.h>

#define SLOTS 16

struct slot {
	char *key;  /* owned; NULL: empty. free (forget) */
	char *text; /* owned; free (forget) */
};

struct th_memo {
	struct th_memo_stamp stamp; /* what every kept text is valid for */
	struct slot slots[SLOTS];
	size_t next; /* the slot the next put takes when no slot has the key */
};

struct th_memo *th_memo_new(void)
{
	return calloc(1, sizeof(struct th_memo));
}

static void forget(struct slot *s)
{
	free(s->key);
	free(s->text);
	s->key = NULL;
	s->text = NULL;
}

static void forget_all(struct th_memo *m)
{
	for (size_t i = 0; i < SLOTS; i++)
		forget(&m->slots[i]);
}

void th_memo_free(struct th_memo *m)
{
	if (m == NULL)
		return;
	forget_all(m);
	free(m);
}

/* Makes s the memo's stamp; a different one forgets everything kept for the old. */
static void restamp(struct th_memo *m, struct th_memo_stamp s)
{
	if (m->stamp.seen != s.seen || m->stamp.wrote != s.wrote) {
		forget_all(m);
		m->stamp = s;
	}
}

static struct slot *find(struct th_memo *m, const char *key)
{
	for (size_t i = 0; i < SLOTS; i++)
		if (m->slots[i].key != NULL && strcmp(m->slots[i].key, key) == 0)
			return &m->slots[i];
	return NULL;
}

const char *th_memo_get(struct th_memo *m, struct th_memo_stamp s, const char *key)
{
	restamp(m, s);
	struct slot *hit = find(m, key);
	return hit != NULL ? hit->text : NULL;
}

int th_memo_has(const struct th_memo *m, const char *key)
{
	for (size_t i = 0; i < SLOTS; i++)
		if (m->slots[i].key != NULL && strcmp(m->slots[i].key, key) == 0)
			return 1;
	return 0;
}

void th_memo_put(struct th_memo *m, struct th_memo_stamp s, const char *key, const char *text)
{
	restamp(m, s);
	if (strlen(text) > TH_MEMO_TEXT_MAX)
		return;
	struct slot *slot = find(m, key);
	if (slot == NULL) {
		slot = &m->slots[m->next];
		m->next = (m->next + 1) % SLOTS;
	}
	forget(slot);
	slot->key = strdup(key);
	slot->text = strdup(text);
	if (slot->key == NULL || slot->text == NULL)
		forget(slot);
}
