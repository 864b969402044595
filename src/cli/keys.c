/* SPDX-License-Identifier: Apache-2.0 */
/* keys.c — `tiny-harness keys`: API keys for identity = bearer (SEC-1, decision-037). A
 * new key is printed once and only its hash is stored; list never shows a key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "cli/cli.h"
#include "config/settings.h"
#include "ops/auth.h"
#include "store/store.h"
#include "worker/process.h"
#include "util/idrule.h"
#include "util/ids.h"
#include "util/log.h"

struct add_arg {
	const char *id, *participant, *name, *hash;
};

static th_err add_part(struct th_store *st, void *arg, struct th_error *e)
{
	const struct add_arg *a = arg;
	return th_store_key_add(st, a->id, a->participant, a->name, a->hash, e);
}

struct revoke_arg {
	const char *which;
	int64_t n;
};

static th_err revoke_part(struct th_store *st, void *arg, struct th_error *e)
{
	struct revoke_arg *a = arg;
	return th_store_key_revoke(st, a->which, &a->n, e);
}

static int usage(const char *why)
{
	/* As every other command's usage error: the reason, and where the usage is. */
	fprintf(stderr, "tiny-harness keys: %s\nTry 'tiny-harness --help'.\n", why);
	return 2;
}

static int keys_add(struct th_app *app, const char *participant, const char *name,
                    struct th_error *e)
{
	char key[TH_KEY_BUF], hash[TH_KEY_HASH_BUF], id[24];
	if (th_id_check(participant, strlen(participant), (size_t)app->cfg->lim.max_id,
	                "the participant", e) != TH_OK ||
	    th_auth_key_new(key, hash, e) != TH_OK)
		return 1;
	/* The id is public (keys list, revoke): eight characters of the hash say nothing
	 * of the key. */
	snprintf(id, sizeof id, "k%.8s", hash);
	struct add_arg a = {id, participant, name, hash};
	if (th_store_write(app->store, add_part, &a, e) != TH_OK)
		return 1;
	printf("%s\n", key);
	fprintf(stderr, "API key %s for %s%s%s: shown once, store it now\n", id, participant,
	        name != NULL ? " named " : "", name != NULL ? name : "");
	return 0;
}

static int keys_list(struct th_app *app, struct th_error *e)
{
	struct th_api_key *k = NULL;
	size_t n = 0;
	if (th_store_key_list(app->store, &k, &n, e) != TH_OK)
		return 1;
	for (size_t i = 0; i < n; i++) {
		char ts[TH_TS_LEN + 1], rv[TH_TS_LEN + 1] = "-";
		char who[TH_ID_BUF * 4], name[TH_ID_BUF * 4];
		th_ts_format(k[i].created_ms, ts);
		if (k[i].revoked_ms != 0)
			th_ts_format(k[i].revoked_ms, rv);
		/* Names come from the operator, participants from the id rule; escaped all the
		 * same so a terminal never acts on them (SEC-6). */
		th_log_escape(who, sizeof who, k[i].participant);
		th_log_escape(name, sizeof name, k[i].name != NULL ? k[i].name : "-");
		printf("%s\t%s\t%s\tcreated %s\trevoked %s\n", k[i].id, who, name, ts, rv);
	}
	th_api_keys_free(k, n);
	return 0;
}

int th_cli_keys(int argc, char **argv)
{
	const char *sub = argc > 2 ? argv[2] : "";
	const char *name = NULL;
	if (strcmp(sub, "add") == 0) {
		if (argc == 6 && strcmp(argv[4], "--name") == 0 && argv[5][0] != '\0')
			name = argv[5];
		else if (argc != 4)
			return usage("add takes a participant and an optional --name N");
	} else if (strcmp(sub, "list") == 0) {
		if (argc != 3)
			return usage("list takes no arguments");
	} else if (strcmp(sub, "revoke") == 0) {
		if (argc != 4)
			return usage("revoke takes one key id or name");
	} else {
		return usage("name a sub-command: add, list or revoke");
	}
	struct th_app app;
	if (th_cli_open_app(&app) != 0)
		return 1;
	struct th_error e;
	th_error_clear(&e);
	int status;
	if (strcmp(sub, "add") == 0) {
		status = keys_add(&app, argv[3], name, &e);
	} else if (strcmp(sub, "list") == 0) {
		status = keys_list(&app, &e);
	} else {
		struct revoke_arg a = {argv[3], 0};
		status = th_store_write(app.store, revoke_part, &a, &e) != TH_OK;
		if (status == 0 && a.n == 0) {
			th_error_set(&e, TH_ENOTFOUND, "no unrevoked key has the id or name '%s'",
			             argv[3]);
			status = 1;
		} else if (status == 0) {
			printf("revoked %lld key%s\n", (long long)a.n, a.n == 1 ? "" : "s");
		}
	}
	if (status != 0)
		fprintf(stderr, "tiny-harness: keys %s: %s\n", sub, e.msg);
	th_app_close(&app);
	return status;
}
