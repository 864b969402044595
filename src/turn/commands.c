/* SPDX-License-Identifier: Apache-2.0 */
#include "turn/commands.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/jsonx.h"
#include "util/text.h"

/* The built-ins (CMD-3); turn/builtins.c runs them. */
static const struct {
	const char *name, *description, *hint;
} builtins[] = {
    {"help", "List the slash commands this agent understands", ""},
    {"status", "Show the task's state, sub-state, participants, plan and sub-tasks", ""},
    {"plan", "Replace the task's plan with these steps", "STEP; STEP; ..."},
    {"step", "Mark a plan step done or failed", "STEP done|failed [OUTPUT]"},
    {"ask", "Ask a participant a question; the task waits for the answer", "PARTICIPANT QUESTION"},
    {"subtask", "Spawn a linked sub-task", "NAME: GOAL"},
    {"invite", "Add a participant (default role watcher; admin or reporter only)",
     "PARTICIPANT [ROLE]"},
    {"role", "Change a participant's role (admin or reporter only)", "PARTICIPANT ROLE"},
    {"confirm", "Ask for an approval: an A2UI card with Approve / Reject, or in text", "QUESTION"},
};

static int valid_name(const char *s, size_t n)
{
	if (n == 0 || n > 64)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '-' || s[i] == '_'))
			return 0;
	return 1;
}

static th_err add(struct th_registry *r, const char *name, const char *desc, const char *hint,
                  const char *tmpl, enum th_command_kind kind, struct th_error *e)
{
	struct th_command *cmds = realloc(r->cmds, (r->n + 1) * sizeof *cmds);
	if (cmds == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	r->cmds = cmds;
	struct th_command *c = &cmds[r->n];
	memset(c, 0, sizeof *c);
	c->kind = kind;
	c->name = strdup(name);
	c->description = strdup(desc);
	c->argument_hint = strdup(hint);
	c->template_text = tmpl ? strdup(tmpl) : NULL;
	r->n++;
	if (c->name == NULL || c->description == NULL || c->argument_hint == NULL ||
	    (tmpl != NULL && c->template_text == NULL))
		return th_error_set(e, TH_ENOMEM, "out of memory");
	return TH_OK;
}

/* A command file: optional front matter between "---" lines with description: and
 * argument-hint:, then the prompt template. */
static th_err load_file(struct th_registry *r, const char *path, const char *name,
                        struct th_error *e)
{
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return th_error_set(e, TH_EINVAL, "command file %s: %s", path, strerror(errno));
	struct th_buf body;
	th_buf_init(&body);
	char line[4096];
	char desc[512] = "", hint[256] = "";
	int in_front = 0, lineno = 0;
	th_err rc = TH_OK;
	while (fgets(line, sizeof line, f) != NULL) {
		lineno++;
		if (lineno == 1 && strncmp(line, "---", 3) == 0 && th_trim(line + 3)[0] == '\0') {
			in_front = 1;
			continue;
		}
		if (in_front) {
			char *s = th_trim(line);
			if (strcmp(s, "---") == 0) {
				in_front = 0;
				continue;
			}
			char *key = NULL, *val = NULL;
			if (th_split_pair(s, ':', &key, &val) != 0) {
				if (*s == '\0')
					continue;
				rc = th_error_set(e, TH_EINVAL,
				                  "command file %s:%d: expected 'key: value'", path,
				                  lineno);
				break;
			}
			if (strcmp(key, "description") == 0)
				snprintf(desc, sizeof desc, "%s", val);
			else if (strcmp(key, "argument-hint") == 0)
				snprintf(hint, sizeof hint, "%s", val);
			continue;
		}
		th_buf_puts(&body, line);
	}
	fclose(f);
	if (rc == TH_OK && in_front)
		rc = th_error_set(e, TH_EINVAL,
		                  "command file %s: front matter is not closed by ---", path);
	if (rc == TH_OK && body.oom)
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	if (rc == TH_OK) {
		static char none[] = "";
		char *tmpl = th_trim(body.data ? body.data : none);
		if (*tmpl == '\0')
			rc = th_error_set(e, TH_EINVAL,
			                  "command file %s: the prompt template is empty", path);
		else
			rc = add(r, name, desc[0] ? desc : name, hint, tmpl, TH_CMD_FILE, e);
	}
	th_buf_free(&body);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

th_err th_registry_load(const char *dir, struct th_registry **out, struct th_error *e)
{
	*out = NULL;
	struct th_registry *r = calloc(1, sizeof *r);
	if (r == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	th_err rc = TH_OK;
	for (size_t i = 0; rc == TH_OK && i < sizeof builtins / sizeof builtins[0]; i++)
		rc = add(r, builtins[i].name, builtins[i].description, builtins[i].hint, NULL,
		         TH_CMD_BUILTIN, e);
	DIR *d = rc == TH_OK && dir != NULL ? opendir(dir) : NULL;
	if (d != NULL) {
		/* Sorted, so the card lists file commands in a stable order. */
		char **names = NULL;
		size_t nn = 0;
		struct dirent *de;
		while ((de = readdir(d)) != NULL) {
			size_t len = strlen(de->d_name);
			if (len < 4 || strcmp(de->d_name + len - 3, ".md") != 0)
				continue;
			char **grown = realloc(names, (nn + 1) * sizeof *names);
			if (grown == NULL || (grown[nn] = strdup(de->d_name)) == NULL) {
				names = grown ? grown : names;
				rc = th_error_set(e, TH_ENOMEM, "out of memory");
				break;
			}
			names = grown;
			nn++;
		}
		closedir(d);
		if (nn > 0)
			qsort(names, nn, sizeof *names, by_name);
		for (size_t i = 0; rc == TH_OK && i < nn; i++) {
			size_t len = strlen(names[i]) - 3;
			if (strcmp(names[i], "README.md") == 0)
				continue;
			if (!valid_name(names[i], len)) {
				rc = th_error_set(e, TH_EINVAL,
				                  "command file %s/%s: a command name uses "
				                  "letters, digits, - and _",
				                  dir, names[i]);
				break;
			}
			char name[65];
			snprintf(name, sizeof name, "%.*s", (int)len, names[i]);
			for (size_t j = 0; j < r->n; j++)
				if (strcmp(r->cmds[j].name, name) == 0)
					rc = th_error_set(
					    e, TH_EINVAL,
					    "command file %s/%s: /%s is already a command", dir,
					    names[i], name);
			if (rc != TH_OK)
				break;
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", dir, names[i]);
			rc = load_file(r, path, name, e);
		}
		for (size_t i = 0; i < nn; i++)
			free(names[i]);
		free(names);
	}
	if (rc != TH_OK) {
		th_registry_free(r);
		return rc;
	}
	*out = r;
	return TH_OK;
}

void th_registry_free(struct th_registry *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->cmds[i].name);
		free(r->cmds[i].description);
		free(r->cmds[i].argument_hint);
		free(r->cmds[i].template_text);
	}
	free(r->cmds);
	free(r);
}

json_object *th_registry_card_params(const struct th_registry *r)
{
	json_object *arr = json_object_new_array();
	for (size_t i = 0; arr != NULL && i < r->n; i++) {
		json_object *c = json_object_new_object();
		int bad = th_json_put(c, "name", json_object_new_string(r->cmds[i].name));
		bad |=
		    th_json_put(c, "description", json_object_new_string(r->cmds[i].description));
		bad |= th_json_put(c, "argument_hint",
		                   json_object_new_string(r->cmds[i].argument_hint));
		if (bad) {
			json_object_put(c);
			json_object_put(arr);
			return NULL; /* decision-026: the caller reports TH_ENOMEM */
		}
		if (th_json_push(arr, c) != 0) {
			json_object_put(arr);
			return NULL;
		}
	}
	return arr;
}

const struct th_command *th_registry_match(const struct th_registry *r, const char *text,
                                           const char **args)
{
	if (text == NULL || text[0] != '/')
		return NULL;
	const char *name = text + 1;
	size_t n = 0;
	while (name[n] != '\0' && !isspace((unsigned char)name[n]))
		n++;
	for (size_t i = 0; i < r->n; i++) {
		if (strlen(r->cmds[i].name) == n && memcmp(r->cmds[i].name, name, n) == 0) {
			const char *a = name + n;
			while (isspace((unsigned char)*a))
				a++;
			if (args != NULL)
				*args = a;
			return &r->cmds[i];
		}
	}
	return NULL;
}

char *th_command_expand(const struct th_command *c, const char *args)
{
	struct th_buf b;
	th_buf_init(&b);
	const char *p = c->template_text, *hit;
	while ((hit = strstr(p, "$ARGUMENTS")) != NULL) {
		th_buf_append(&b, p, (size_t)(hit - p));
		th_buf_puts(&b, args);
		p = hit + strlen("$ARGUMENTS");
	}
	th_buf_puts(&b, p);
	if (b.oom) {
		th_buf_free(&b);
		return NULL;
	}
	return th_buf_take(&b);
}
