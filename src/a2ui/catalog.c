/* SPDX-License-Identifier: Apache-2.0 */
/* catalog.c — the A2UI 0.9 basic catalog as tables, and the checks of one component against it
 * (UI-1). Mirrors catalogs/basic/catalog.json and common_types.json; the contract test
 * tests/contract/a2ui_schema.mjs compares these tables with the official files, so a drift
 * fails the build. Deliberately stricter than the schema in two places: a function call used
 * where a typed value is expected must return that type, and accessibility objects take no
 * unknown keys. */
#include "a2ui/a2ui_int.h"

#include <assert.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum kind {
	K_DSTR,     /* DynamicString */
	K_DNUM,     /* DynamicNumber */
	K_DBOOL,    /* DynamicBoolean */
	K_DSTRLIST, /* DynamicStringList */
	K_DVALUE,   /* DynamicValue */
	K_ANY,      /* any JSON value */
	K_STR,
	K_NUM,
	K_UINT, /* integer >= 0 */
	K_BOOL,
	K_ENUM,
	K_URI,
	K_CID,       /* ComponentId reference */
	K_CHILDLIST, /* ChildList */
	K_TABS,
	K_OPTIONS,
	K_ACTION,
	K_CHECKS,
	K_ICON,
	K_ACCESS,  /* AccessibilityAttributes */
	K_DTBOUND, /* DynamicString; a literal is a date, time or date-time */
	K_DBOOLS2  /* array of at least two DynamicBoolean */
};

/* The name the contract test derives from the official schema for each kind. */
static const char *const kind_names[] = {
    [K_DSTR] = "DynamicString",
    [K_DNUM] = "DynamicNumber",
    [K_DBOOL] = "DynamicBoolean",
    [K_DSTRLIST] = "DynamicStringList",
    [K_DVALUE] = "DynamicValue",
    [K_ANY] = "any",
    [K_STR] = "string",
    [K_NUM] = "number",
    [K_UINT] = "integer",
    [K_BOOL] = "boolean",
    [K_ENUM] = "enum",
    [K_URI] = "uri",
    [K_CID] = "ComponentId",
    [K_CHILDLIST] = "ChildList",
    [K_TABS] = "array",
    [K_OPTIONS] = "array",
    [K_ACTION] = "Action",
    [K_CHECKS] = "array",
    [K_ICON] = "oneOf",
    [K_ACCESS] = "AccessibilityAttributes",
    [K_DTBOUND] = "allOf",
    [K_DBOOLS2] = "array",
};

struct prop {
	const char *name;
	enum kind kind;
	int required;
	const char *const *values; /* K_ENUM: NULL-terminated */
};

#define MAX_PROPS 8

struct comp {
	const char *name;
	int checkable;
	struct prop props[MAX_PROPS]; /* ends at the first NULL name */
};

static const char *const text_variants[] = {"h1", "h2", "h3", "h4", "h5", "caption", "body", NULL};
static const char *const image_fits[] = {"contain", "cover", "fill", "none", "scaleDown", NULL};
static const char *const image_variants[] = {
    "icon", "avatar", "smallFeature", "mediumFeature", "largeFeature", "header", NULL};
static const char *const justifies[] = {"center",      "end",   "spaceAround", "spaceBetween",
                                        "spaceEvenly", "start", "stretch",     NULL};
static const char *const aligns[] = {"start", "center", "end", "stretch", NULL};
static const char *const directions[] = {"vertical", "horizontal", NULL};
static const char *const axes[] = {"horizontal", "vertical", NULL};
static const char *const button_variants[] = {"default", "primary", "borderless", NULL};
static const char *const field_variants[] = {"longText", "number", "shortText", "obscured", NULL};
static const char *const picker_variants[] = {"multipleSelection", "mutuallyExclusive", NULL};
static const char *const display_styles[] = {"checkbox", "chips", NULL};
static const char *const return_types[] = {"string", "number", "boolean", "array",
                                           "object", "any",    "void",    NULL};
static const char *const icon_names[] = {
    "accountCircle", "add",          "arrowBack",   "arrowForward",  "attachFile",
    "calendarToday", "call",         "camera",      "check",         "close",
    "delete",        "download",     "edit",        "event",         "error",
    "fastForward",   "favorite",     "favoriteOff", "folder",        "help",
    "home",          "info",         "locationOn",  "lock",          "lockOpen",
    "mail",          "menu",         "moreVert",    "moreHoriz",     "notificationsOff",
    "notifications", "pause",        "payment",     "person",        "phone",
    "photo",         "play",         "print",       "refresh",       "rewind",
    "search",        "send",         "settings",    "share",         "shoppingCart",
    "skipNext",      "skipPrevious", "star",        "starHalf",      "starOff",
    "stop",          "upload",       "visibility",  "visibilityOff", "volumeDown",
    "volumeMute",    "volumeOff",    "volumeUp",    "warning",       NULL};

/* Properties every component takes besides id and component. */
static const struct prop common_props[] = {
    {"accessibility", K_ACCESS, 0, NULL},
    {"weight", K_NUM, 0, NULL},
    {NULL, K_ANY, 0, NULL},
};
static const struct prop checkable_prop = {"checks", K_CHECKS, 0, NULL};

static const struct comp comps[] = {
    {"Text", 0, {{"text", K_DSTR, 1, NULL}, {"variant", K_ENUM, 0, text_variants}}},
    {"Image",
     0,
     {{"url", K_DSTR, 1, NULL},
      {"description", K_DSTR, 0, NULL},
      {"fit", K_ENUM, 0, image_fits},
      {"variant", K_ENUM, 0, image_variants}}},
    {"Icon", 0, {{"name", K_ICON, 1, NULL}}},
    {"Video", 0, {{"url", K_DSTR, 1, NULL}}},
    {"AudioPlayer", 0, {{"url", K_DSTR, 1, NULL}, {"description", K_DSTR, 0, NULL}}},
    {"Row",
     0,
     {{"children", K_CHILDLIST, 1, NULL},
      {"justify", K_ENUM, 0, justifies},
      {"align", K_ENUM, 0, aligns}}},
    {"Column",
     0,
     {{"children", K_CHILDLIST, 1, NULL},
      {"justify", K_ENUM, 0, justifies},
      {"align", K_ENUM, 0, aligns}}},
    {"List",
     0,
     {{"children", K_CHILDLIST, 1, NULL},
      {"direction", K_ENUM, 0, directions},
      {"align", K_ENUM, 0, aligns}}},
    {"Card", 0, {{"child", K_CID, 1, NULL}}},
    {"Tabs", 0, {{"tabs", K_TABS, 1, NULL}}},
    {"Modal", 0, {{"trigger", K_CID, 1, NULL}, {"content", K_CID, 1, NULL}}},
    {"Divider", 0, {{"axis", K_ENUM, 0, axes}}},
    {"Button",
     1,
     {{"child", K_CID, 1, NULL},
      {"variant", K_ENUM, 0, button_variants},
      {"action", K_ACTION, 1, NULL}}},
    {"TextField",
     1,
     {{"label", K_DSTR, 1, NULL},
      {"value", K_DSTR, 0, NULL},
      {"variant", K_ENUM, 0, field_variants},
      {"validationRegexp", K_STR, 0, NULL}}},
    {"CheckBox", 1, {{"label", K_DSTR, 1, NULL}, {"value", K_DBOOL, 1, NULL}}},
    {"ChoicePicker",
     1,
     {{"label", K_DSTR, 0, NULL},
      {"variant", K_ENUM, 0, picker_variants},
      {"options", K_OPTIONS, 1, NULL},
      {"value", K_DSTRLIST, 1, NULL},
      {"displayStyle", K_ENUM, 0, display_styles},
      {"filterable", K_BOOL, 0, NULL}}},
    {"Slider",
     1,
     {{"label", K_DSTR, 0, NULL},
      {"min", K_NUM, 0, NULL},
      {"max", K_NUM, 1, NULL},
      {"value", K_DNUM, 1, NULL}}},
    {"DateTimeInput",
     1,
     {{"value", K_DSTR, 1, NULL},
      {"enableDate", K_BOOL, 0, NULL},
      {"enableTime", K_BOOL, 0, NULL},
      {"min", K_DTBOUND, 0, NULL},
      {"max", K_DTBOUND, 0, NULL},
      {"label", K_DSTR, 0, NULL}}},
};

#define NCOMPS (sizeof comps / sizeof comps[0])

struct fn {
	const char *name;
	const char *returns;
	int min_or_max; /* args need "min" or "max" */
	struct prop args[MAX_PROPS];
};

static const struct fn fns[] = {
    {"required", "boolean", 0, {{"value", K_ANY, 1, NULL}}},
    {"regex", "boolean", 0, {{"value", K_DSTR, 1, NULL}, {"pattern", K_STR, 1, NULL}}},
    {"length",
     "boolean",
     1,
     {{"value", K_DSTR, 1, NULL}, {"min", K_UINT, 0, NULL}, {"max", K_UINT, 0, NULL}}},
    {"numeric",
     "boolean",
     1,
     {{"value", K_DNUM, 1, NULL}, {"min", K_NUM, 0, NULL}, {"max", K_NUM, 0, NULL}}},
    {"email", "boolean", 0, {{"value", K_DSTR, 1, NULL}}},
    {"formatString", "string", 0, {{"value", K_DSTR, 1, NULL}}},
    {"formatNumber",
     "string",
     0,
     {{"value", K_DNUM, 1, NULL}, {"decimals", K_DNUM, 0, NULL}, {"grouping", K_DBOOL, 0, NULL}}},
    {"formatCurrency",
     "string",
     0,
     {{"value", K_DNUM, 1, NULL},
      {"currency", K_DSTR, 1, NULL},
      {"decimals", K_DNUM, 0, NULL},
      {"grouping", K_DBOOL, 0, NULL}}},
    {"formatDate", "string", 0, {{"value", K_DVALUE, 1, NULL}, {"format", K_DSTR, 1, NULL}}},
    {"pluralize",
     "string",
     0,
     {{"value", K_DNUM, 1, NULL},
      {"zero", K_DSTR, 0, NULL},
      {"one", K_DSTR, 0, NULL},
      {"two", K_DSTR, 0, NULL},
      {"few", K_DSTR, 0, NULL},
      {"many", K_DSTR, 0, NULL},
      {"other", K_DSTR, 1, NULL}}},
    {"openUrl", "void", 0, {{"url", K_URI, 1, NULL}}},
    {"and", "boolean", 0, {{"values", K_DBOOLS2, 1, NULL}}},
    {"or", "boolean", 0, {{"values", K_DBOOLS2, 1, NULL}}},
    {"not", "boolean", 0, {{"value", K_DBOOL, 1, NULL}}},
};

#define NFNS (sizeof fns / sizeof fns[0])

/* A validation in progress: where it is, and the references it collects. */
struct vctx {
	const struct th_a2ui_where *w;
	json_object *refs; /* borrowed; NULL when references are not collected */
	int call_depth;
};

th_err th_a2ui_fail(const struct th_a2ui_where *w, const char *path, const char *fmt, ...)
{
	char rule[TH_ERRMSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rule, sizeof rule, fmt, ap);
	va_end(ap);
	if (path != NULL && path[0] != '\0')
		return th_error_set(w->e, TH_EINVAL, "%s: %s: %s", w->prefix, path, rule);
	return th_error_set(w->e, TH_EINVAL, "%s: %s", w->prefix, rule);
}

/* dst = path + sep + key, truncated to fit. */
static void join(char *dst, size_t n, const char *path, const char *key)
{
	size_t len = 0;
	for (const char *p = path; p != NULL && *p != '\0' && len + 1 < n; p++)
		dst[len++] = *p;
	if (len > 0 && len + 1 < n)
		dst[len++] = '.';
	for (const char *p = key; p != NULL && *p != '\0' && len + 1 < n; p++)
		dst[len++] = *p;
	dst[len] = '\0';
}

static void join_index(char *dst, size_t n, const char *path, size_t i)
{
	char key[32];
	snprintf(key, sizeof key, "[%zu]", i);
	size_t len = 0;
	for (const char *p = path; p != NULL && *p != '\0' && len + 1 < n; p++)
		dst[len++] = *p;
	for (const char *p = key; *p != '\0' && len + 1 < n; p++)
		dst[len++] = *p;
	dst[len] = '\0';
}

static int in_list(const char *s, const char *const *list)
{
	for (size_t i = 0; list != NULL && list[i] != NULL; i++)
		if (strcmp(s, list[i]) == 0)
			return 1;
	return 0;
}

int th_a2ui_extra_key(json_object *obj, const char *const *allowed, const char **bad)
{
	json_object_object_foreach(obj, key, val)
	{
		(void)val;
		if (!in_list(key, allowed)) {
			if (bad != NULL)
				*bad = key;
			return 1;
		}
	}
	return 0;
}

int th_a2ui_id_ok(json_object *s)
{
	if (s == NULL || !json_object_is_type(s, json_type_string))
		return 0;
	int len = json_object_get_string_len(s);
	return len > 0 && len <= TH_A2UI_MAX_ID_BYTES;
}

int th_a2ui_pointer_ok(const char *s)
{
	for (const char *p = s; *p != '\0'; p++)
		if (*p == '~' && p[1] != '0' && p[1] != '1')
			return 0;
	return 1;
}

static int digits(const char *s, int n)
{
	for (int i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

static int num(const char *s, int n)
{
	int v = 0;
	for (int i = 0; i < n; i++)
		v = v * 10 + (s[i] - '0');
	return v;
}

/* "YYYY-MM-DD" with a real day of the month; returns characters used or 0. */
static int parse_date(const char *s)
{
	if (!digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' || !digits(s + 8, 2))
		return 0;
	int y = num(s, 4), m = num(s + 5, 2), d = num(s + 8, 2);
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	if (m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
		return 0;
	if (m == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return 0;
	return 10;
}

/* "HH:MM:SS[.frac](Z|±HH:MM)", the zone required as in RFC 3339 (and ajv-formats). Seconds
 * stop at 59: a leap second is refused rather than checked. 1 when s is exactly that. */
static int parse_time(const char *s)
{
	if (!digits(s, 2) || s[2] != ':' || !digits(s + 3, 2) || s[5] != ':' || !digits(s + 6, 2))
		return 0;
	if (num(s, 2) > 23 || num(s + 3, 2) > 59 || num(s + 6, 2) > 59)
		return 0;
	const char *p = s + 8;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return 0;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'Z' || *p == 'z')
		return p[1] == '\0';
	if (*p == '+' || *p == '-') {
		if (!digits(p + 1, 2) || p[3] != ':' || !digits(p + 4, 2))
			return 0;
		return num(p + 1, 2) <= 23 && num(p + 4, 2) <= 59 && p[6] == '\0';
	}
	return 0;
}

int th_a2ui_datetime_ok(const char *s)
{
	if (strlen(s) < 11 || parse_date(s) != 10)
		return 0;
	if (s[10] != 'T' && s[10] != 't' && s[10] != ' ')
		return 0;
	return parse_time(s + 11);
}

static int date_ok(const char *s)
{
	return strlen(s) == 10 && parse_date(s) == 10;
}

/* An absolute URI: a scheme, ':', then only RFC 3986 characters (unreserved, reserved, and
 * '%' with two hex digits), which keeps it within what ajv-formats' "uri" accepts. */
static int uri_ok(const char *s)
{
	const char *p = s;
	if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
		return 0;
	while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
	       *p == '+' || *p == '-' || *p == '.')
		p++;
	if (*p != ':' || p[1] == '\0')
		return 0;
	for (p++; *p != '\0'; p++) {
		unsigned char c = (unsigned char)*p;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-._~:/?#[]@!$&'()*+,;=", c) != NULL)
			continue;
		if (c == '%' && isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2])) {
			p += 2;
			continue;
		}
		return 0;
	}
	return 1;
}

static int is_number(json_object *v)
{
	return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

static th_err check_value(struct vctx *c, const char *path, const struct prop *p, json_object *v);

static const struct fn *find_fn(const char *name)
{
	for (size_t i = 0; i < NFNS; i++)
		if (strcmp(fns[i].name, name) == 0)
			return &fns[i];
	return NULL;
}

static th_err check_props(struct vctx *c, const char *path, const struct prop *props,
                          json_object *obj, const char *what);

/* A FunctionCall whose result is used where `expected` is wanted ("any": no constraint). */
static th_err check_call(struct vctx *c, const char *path, json_object *v, const char *expected)
{
	static const char *const keys[] = {"call", "args", "returnType", NULL};
	const char *bad = NULL;
	if (th_a2ui_extra_key(v, keys, &bad))
		return th_a2ui_fail(c->w, path, "unknown property \"%s\" in a function call", bad);
	if (c->call_depth >= TH_A2UI_MAX_CALL_DEPTH)
		return th_a2ui_fail(c->w, path, "function calls nested deeper than %d",
		                    TH_A2UI_MAX_CALL_DEPTH);
	const char *name = th_json_str(v, "call");
	if (name == NULL)
		return th_a2ui_fail(c->w, path, "function call needs \"call\" as a string");
	const struct fn *f = find_fn(name);
	if (f == NULL)
		return th_a2ui_fail(c->w, path,
		                    "unknown function \"%s\" (not in the basic catalog)", name);
	json_object *rt = NULL;
	if (json_object_object_get_ex(v, "returnType", &rt)) {
		const char *r =
		    json_object_is_type(rt, json_type_string) ? json_object_get_string(rt) : NULL;
		if (r == NULL || !in_list(r, return_types))
			return th_a2ui_fail(c->w, path, "returnType is not one of the enum values");
		if (strcmp(r, f->returns) != 0)
			return th_a2ui_fail(c->w, path, "function \"%s\" returns %s, not %s", name,
			                    f->returns, r);
	}
	if (strcmp(expected, "any") != 0 && strcmp(expected, f->returns) != 0)
		return th_a2ui_fail(c->w, path, "function \"%s\" returns %s where %s is expected",
		                    name, f->returns, expected);
	json_object *args = NULL;
	if (!json_object_object_get_ex(v, "args", &args) ||
	    !json_object_is_type(args, json_type_object))
		return th_a2ui_fail(c->w, path, "function \"%s\" needs \"args\" as an object",
		                    name);
	char sub[256];
	join(sub, sizeof sub, path, "args");
	if (f->min_or_max && !json_object_object_get_ex(args, "min", NULL) &&
	    !json_object_object_get_ex(args, "max", NULL))
		return th_a2ui_fail(c->w, sub, "function \"%s\" needs \"min\" or \"max\"", name);
	c->call_depth++;
	th_err rc = check_props(c, sub, f->args, args, "argument");
	c->call_depth--;
	return rc;
}

/* A Dynamic* value given as an object: a {path} binding or a function call. */
static th_err check_dynamic_object(struct vctx *c, const char *path, json_object *v,
                                   const char *expected)
{
	if (json_object_object_get_ex(v, "call", NULL))
		return check_call(c, path, v, expected);
	json_object *p = NULL;
	if (json_object_object_get_ex(v, "path", &p)) {
		if (json_object_object_length(v) != 1)
			return th_a2ui_fail(c->w, path, "a data binding takes only \"path\"");
		if (!json_object_is_type(p, json_type_string))
			return th_a2ui_fail(c->w, path, "\"path\" must be a string");
		if (!th_a2ui_pointer_ok(json_object_get_string(p)))
			return th_a2ui_fail(c->w, path, "\"path\" is not a JSON Pointer");
		return TH_OK;
	}
	return th_a2ui_fail(c->w, path, "expected %s, a {\"path\"} binding or a function call",
	                    expected);
}

static th_err add_ref(struct vctx *c, const char *path, json_object *v)
{
	if (!json_object_is_type(v, json_type_string))
		return th_a2ui_fail(c->w, path, "a component id reference must be a string, not %s",
		                    th_json_type_name(v));
	if (!th_a2ui_id_ok(v))
		return th_a2ui_fail(c->w, path, "a component id reference must be 1..%d bytes",
		                    TH_A2UI_MAX_ID_BYTES);
	if (c->refs == NULL)
		return TH_OK;
	json_object *s = json_object_new_string(json_object_get_string(v));
	if (s == NULL || json_object_array_add(c->refs, s) != 0) {
		json_object_put(s);
		return th_error_set(c->w->e, TH_ENOMEM, "out of memory");
	}
	return TH_OK;
}

/* An array whose items are objects checked against props. */
static th_err check_object_list(struct vctx *c, const char *path, json_object *v,
                                const struct prop *props, size_t min_items, const char *what)
{
	if (!json_object_is_type(v, json_type_array))
		return th_a2ui_fail(c->w, path, "must be an array, not %s", th_json_type_name(v));
	size_t n = json_object_array_length(v);
	if (n < min_items)
		return th_a2ui_fail(c->w, path, "needs at least %zu item(s)", min_items);
	for (size_t i = 0; i < n; i++) {
		char sub[256];
		join_index(sub, sizeof sub, path, i);
		json_object *it = json_object_array_get_idx(v, i);
		if (!json_object_is_type(it, json_type_object))
			return th_a2ui_fail(c->w, sub, "must be an object");
		th_err rc = check_props(c, sub, props, it, what);
		if (rc != TH_OK)
			return rc;
	}
	return TH_OK;
}

static const struct prop tab_props[] = {
    {"title", K_DSTR, 1, NULL},
    {"child", K_CID, 1, NULL},
    {NULL, K_ANY, 0, NULL},
};
static const struct prop option_props[] = {
    {"label", K_DSTR, 1, NULL},
    {"value", K_STR, 1, NULL},
    {NULL, K_ANY, 0, NULL},
};
static const struct prop check_rule_props[] = {
    {"condition", K_DBOOL, 1, NULL},
    {"message", K_STR, 1, NULL},
    {NULL, K_ANY, 0, NULL},
};
static const struct prop access_props[] = {
    {"label", K_DSTR, 0, NULL},
    {"description", K_DSTR, 0, NULL},
    {NULL, K_ANY, 0, NULL},
};
static const struct prop template_props[] = {
    {"componentId", K_CID, 1, NULL},
    {"path", K_STR, 1, NULL},
    {NULL, K_ANY, 0, NULL},
};

static th_err check_action(struct vctx *c, const char *path, json_object *v)
{
	if (!json_object_is_type(v, json_type_object))
		return th_a2ui_fail(c->w, path, "must be an object, not %s", th_json_type_name(v));
	json_object *fc = NULL, *ev = NULL;
	int has_fc = json_object_object_get_ex(v, "functionCall", &fc);
	int has_ev = json_object_object_get_ex(v, "event", &ev);
	if (has_fc + has_ev != 1 || json_object_object_length(v) != 1)
		return th_a2ui_fail(
		    c->w, path, "an action is exactly one of {\"event\"} or {\"functionCall\"}");
	char sub[256];
	if (has_fc) {
		join(sub, sizeof sub, path, "functionCall");
		if (!json_object_is_type(fc, json_type_object))
			return th_a2ui_fail(c->w, sub, "must be an object");
		return check_call(c, sub, fc, "any");
	}
	join(sub, sizeof sub, path, "event");
	if (!json_object_is_type(ev, json_type_object))
		return th_a2ui_fail(c->w, sub, "must be an object");
	static const char *const keys[] = {"name", "context", NULL};
	const char *bad = NULL;
	if (th_a2ui_extra_key(ev, keys, &bad))
		return th_a2ui_fail(c->w, sub, "unknown property \"%s\"", bad);
	json_object *name = NULL;
	if (!json_object_object_get_ex(ev, "name", &name))
		return th_a2ui_fail(c->w, sub, "missing required property \"name\"");
	if (!json_object_is_type(name, json_type_string) || json_object_get_string_len(name) < 1 ||
	    json_object_get_string_len(name) > TH_A2UI_MAX_NAME_BYTES)
		return th_a2ui_fail(c->w, sub, "\"name\" must be a string of 1..%d bytes",
		                    TH_A2UI_MAX_NAME_BYTES);
	json_object *ctx = NULL;
	if (!json_object_object_get_ex(ev, "context", &ctx))
		return TH_OK;
	char csub[256];
	join(csub, sizeof csub, sub, "context");
	if (!json_object_is_type(ctx, json_type_object))
		return th_a2ui_fail(c->w, csub, "must be an object, not %s",
		                    th_json_type_name(ctx));
	if (json_object_object_length(ctx) > TH_A2UI_MAX_CONTEXT_KEYS)
		return th_a2ui_fail(c->w, csub, "more than %d keys", TH_A2UI_MAX_CONTEXT_KEYS);
	static const struct prop dv = {"", K_DVALUE, 0, NULL};
	json_object_object_foreach(ctx, key, val)
	{
		char ksub[256];
		join(ksub, sizeof ksub, csub, key);
		th_err rc = check_value(c, ksub, &dv, val);
		if (rc != TH_OK)
			return rc;
	}
	return TH_OK;
}

/* A value that may also be a binding ({path} or a function call): DSTR, DTBOUND, DNUM, DBOOL,
 * DSTRLIST, DVALUE. */
static th_err check_dynamic(struct vctx *c, const char *path, const struct prop *p, json_object *v)
{
	switch (p->kind) {
	case K_DSTR:
	case K_DTBOUND:
		if (json_object_is_type(v, json_type_string)) {
			const char *s = json_object_get_string(v);
			if (p->kind == K_DTBOUND && !date_ok(s) && !parse_time(s) &&
			    !th_a2ui_datetime_ok(s))
				return th_a2ui_fail(
				    c->w, path, "\"%s\" is not an ISO 8601 date, time or date-time",
				    s);
			return TH_OK;
		}
		if (json_object_is_type(v, json_type_object))
			return check_dynamic_object(c, path, v, "string");
		return th_a2ui_fail(c->w, path, "expected a string or a binding, not %s",
		                    th_json_type_name(v));
	case K_DNUM:
		if (is_number(v))
			return TH_OK;
		if (json_object_is_type(v, json_type_object))
			return check_dynamic_object(c, path, v, "number");
		return th_a2ui_fail(c->w, path, "expected a number or a binding, not %s",
		                    th_json_type_name(v));
	case K_DBOOL:
		if (json_object_is_type(v, json_type_boolean))
			return TH_OK;
		if (json_object_is_type(v, json_type_object))
			return check_dynamic_object(c, path, v, "boolean");
		return th_a2ui_fail(c->w, path, "expected a boolean or a binding, not %s",
		                    th_json_type_name(v));
	case K_DSTRLIST:
		if (json_object_is_type(v, json_type_array)) {
			for (size_t i = 0; i < json_object_array_length(v); i++)
				if (!json_object_is_type(json_object_array_get_idx(v, i),
				                         json_type_string))
					return th_a2ui_fail(c->w, path, "item %zu is not a string",
					                    i);
			return TH_OK;
		}
		if (json_object_is_type(v, json_type_object))
			return check_dynamic_object(c, path, v, "array");
		return th_a2ui_fail(c->w, path, "expected an array of strings or a binding, not %s",
		                    th_json_type_name(v));
	case K_DVALUE:
		if (json_object_is_type(v, json_type_string) || is_number(v) ||
		    json_object_is_type(v, json_type_boolean) ||
		    json_object_is_type(v, json_type_array))
			return TH_OK;
		if (json_object_is_type(v, json_type_object))
			return check_dynamic_object(c, path, v, "any");
		return th_a2ui_fail(c->w, path, "null is not a value here");
	default:
		break;
	}
	return th_error_set(c->w->e, TH_EINTERNAL, "unhandled property kind");
}

/* A ChildList: an array of component ids, or a template {componentId, path}. */
static th_err check_children(struct vctx *c, const char *path, json_object *v)
{
	if (json_object_is_type(v, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			char sub[256];
			join_index(sub, sizeof sub, path, i);
			th_err rc = add_ref(c, sub, json_object_array_get_idx(v, i));
			if (rc != TH_OK)
				return rc;
		}
		return TH_OK;
	}
	if (json_object_is_type(v, json_type_object))
		return check_props(c, path, template_props, v, "property");
	return th_a2ui_fail(c->w, path, "expected an array of ids or {componentId, path}, not %s",
	                    th_json_type_name(v));
}

/* An icon: one of the icon names, {svgPath} or a binding {path}. */
static th_err check_icon(struct vctx *c, const char *path, json_object *v)
{
	if (json_object_is_type(v, json_type_string)) {
		if (!in_list(json_object_get_string(v), icon_names))
			return th_a2ui_fail(c->w, path,
			                    "%s is not one of the enum values (icon names)",
			                    json_object_get_string(v));
		return TH_OK;
	}
	if (json_object_is_type(v, json_type_object) && json_object_object_length(v) == 1) {
		json_object *s = NULL;
		if (json_object_object_get_ex(v, "svgPath", &s))
			return json_object_is_type(s, json_type_string)
			           ? TH_OK
			           : th_a2ui_fail(c->w, path, "svgPath must be a string");
		if (json_object_object_get_ex(v, "path", NULL))
			return check_dynamic_object(c, path, v, "string");
	}
	return th_a2ui_fail(c->w, path, "expected an icon name, {svgPath} or {path}");
}

/* DBOOLS2: an array of at least two booleans or bindings. */
static th_err check_bools(struct vctx *c, const char *path, json_object *v)
{
	if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) < 2)
		return th_a2ui_fail(c->w, path, "expected an array of at least 2 booleans");
	static const struct prop b = {"", K_DBOOL, 0, NULL};
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		char sub[256];
		join_index(sub, sizeof sub, path, i);
		th_err rc = check_value(c, sub, &b, json_object_array_get_idx(v, i));
		if (rc != TH_OK)
			return rc;
	}
	return TH_OK;
}

static th_err check_value(struct vctx *c, const char *path, const struct prop *p, json_object *v)
{
	switch (p->kind) {
	case K_DSTR:
	case K_DTBOUND:
	case K_DNUM:
	case K_DBOOL:
	case K_DSTRLIST:
	case K_DVALUE:
		return check_dynamic(c, path, p, v);
	case K_ANY:
		return TH_OK;
	case K_STR:
		if (!json_object_is_type(v, json_type_string))
			return th_a2ui_fail(c->w, path, "expected a string, not %s",
			                    th_json_type_name(v));
		if (strcmp(p->name, "path") == 0 && !th_a2ui_pointer_ok(json_object_get_string(v)))
			return th_a2ui_fail(c->w, path, "not a JSON Pointer");
		return TH_OK;
	case K_NUM:
		if (!is_number(v))
			return th_a2ui_fail(c->w, path, "expected a number, not %s",
			                    th_json_type_name(v));
		return TH_OK;
	case K_UINT: {
		if (!is_number(v))
			return th_a2ui_fail(c->w, path, "expected an integer, not %s",
			                    th_json_type_name(v));
		double d = json_object_get_double(v);
		if (json_object_is_type(v, json_type_int) ? json_object_get_int64(v) < 0
		                                          : (d < 0 || floor(d) != d))
			return th_a2ui_fail(c->w, path, "expected an integer >= 0");
		return TH_OK;
	}
	case K_BOOL:
		if (!json_object_is_type(v, json_type_boolean))
			return th_a2ui_fail(c->w, path, "expected a boolean, not %s",
			                    th_json_type_name(v));
		return TH_OK;
	case K_ENUM:
		if (!json_object_is_type(v, json_type_string) ||
		    !in_list(json_object_get_string(v), p->values))
			return th_a2ui_fail(c->w, path, "%s is not one of the enum values",
			                    json_object_is_type(v, json_type_string)
			                        ? json_object_get_string(v)
			                        : th_json_type_name(v));
		return TH_OK;
	case K_URI:
		if (!json_object_is_type(v, json_type_string) || !uri_ok(json_object_get_string(v)))
			return th_a2ui_fail(c->w, path, "expected an absolute URI");
		return TH_OK;
	case K_CID:
		return add_ref(c, path, v);
	case K_CHILDLIST:
		return check_children(c, path, v);
	case K_TABS:
		return check_object_list(c, path, v, tab_props, 1, "property");
	case K_OPTIONS:
		return check_object_list(c, path, v, option_props, 0, "property");
	case K_CHECKS:
		return check_object_list(c, path, v, check_rule_props, 0, "property");
	case K_ACTION:
		return check_action(c, path, v);
	case K_ICON:
		return check_icon(c, path, v);
	case K_ACCESS:
		if (!json_object_is_type(v, json_type_object))
			return th_a2ui_fail(c->w, path, "must be an object, not %s",
			                    th_json_type_name(v));
		return check_props(c, path, access_props, v, "property");
	case K_DBOOLS2:
		return check_bools(c, path, v);
	}
	return th_error_set(c->w->e, TH_EINTERNAL, "unhandled property kind");
}

static const struct prop *find_prop(const struct prop *props, const char *name)
{
	for (size_t i = 0; i < MAX_PROPS && props[i].name != NULL; i++)
		if (strcmp(props[i].name, name) == 0)
			return &props[i];
	return NULL;
}

/* Every key of obj is one of props and valid; every required one is present. */
static th_err check_props(struct vctx *c, const char *path, const struct prop *props,
                          json_object *obj, const char *what)
{
	json_object_object_foreach(obj, key, val)
	{
		const struct prop *p = find_prop(props, key);
		if (p == NULL)
			return th_a2ui_fail(c->w, path, "unknown %s \"%s\"", what, key);
		char sub[256];
		join(sub, sizeof sub, path, key);
		th_err rc = check_value(c, sub, p, val);
		if (rc != TH_OK)
			return rc;
	}
	for (size_t i = 0; i < MAX_PROPS && props[i].name != NULL; i++)
		if (props[i].required && !json_object_object_get_ex(obj, props[i].name, NULL))
			return th_a2ui_fail(c->w, path, "missing required %s \"%s\"", what,
			                    props[i].name);
	return TH_OK;
}

th_err th_a2ui_check_component(const struct th_a2ui_where *w, json_object *comp, json_object *refs,
                               const char **type)
{
	struct vctx c = {w, refs, 0};
	*type = NULL;
	if (!json_object_is_type(comp, json_type_object))
		return th_a2ui_fail(w, NULL, "a component must be an object, not %s",
		                    th_json_type_name(comp));
	json_object *name = NULL;
	if (!json_object_object_get_ex(comp, "component", &name))
		return th_a2ui_fail(w, NULL, "missing required property \"component\"");
	if (!json_object_is_type(name, json_type_string))
		return th_a2ui_fail(w, NULL, "\"component\" must be a string");
	const struct comp *def = NULL;
	for (size_t i = 0; i < NCOMPS; i++)
		if (strcmp(comps[i].name, json_object_get_string(name)) == 0)
			def = &comps[i];
	if (def == NULL)
		return th_a2ui_fail(w, NULL,
		                    "unknown component type \"%s\" (not in the basic catalog)",
		                    json_object_get_string(name));
	json_object_object_foreach(comp, key, val)
	{
		if (strcmp(key, "id") == 0 || strcmp(key, "component") == 0)
			continue;
		const struct prop *p = find_prop(def->props, key);
		if (p == NULL)
			p = find_prop(common_props, key);
		if (p == NULL && def->checkable && strcmp(key, checkable_prop.name) == 0)
			p = &checkable_prop;
		if (p == NULL)
			return th_a2ui_fail(w, NULL, "unknown property \"%s\" for %s", key,
			                    def->name);
		th_err rc = check_value(&c, key, p, val);
		if (rc != TH_OK)
			return rc;
	}
	for (size_t i = 0; i < MAX_PROPS && def->props[i].name != NULL; i++)
		if (def->props[i].required &&
		    !json_object_object_get_ex(comp, def->props[i].name, NULL))
			return th_a2ui_fail(w, NULL, "%s requires property \"%s\"", def->name,
			                    def->props[i].name);
	*type = def->name;
	return TH_OK;
}

th_err th_a2ui_check_theme(const struct th_a2ui_where *w, json_object *theme)
{
	if (!json_object_is_type(theme, json_type_object))
		return th_a2ui_fail(w, "theme", "must be an object");
	json_object *v = NULL;
	if (json_object_object_get_ex(theme, "primaryColor", &v)) {
		const char *s =
		    json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
		int ok = strlen(s) == 7 && s[0] == '#';
		for (int i = 1; ok && i < 7; i++)
			ok = (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
			     (s[i] >= 'A' && s[i] <= 'F');
		if (!ok)
			return th_a2ui_fail(w, "theme.primaryColor", "must be #RRGGBB");
	}
	if (json_object_object_get_ex(theme, "iconUrl", &v) &&
	    (!json_object_is_type(v, json_type_string) || !uri_ok(json_object_get_string(v))))
		return th_a2ui_fail(w, "theme.iconUrl", "must be an absolute URI");
	if (json_object_object_get_ex(theme, "agentDisplayName", &v) &&
	    !json_object_is_type(v, json_type_string))
		return th_a2ui_fail(w, "theme.agentDisplayName", "must be a string");
	return TH_OK;
}

/* ---- the tables as JSON (contract test) ---- */

static json_object *prop_json(const struct prop *p)
{
	json_object *o = json_object_new_object();
	if (o == NULL)
		return NULL;
	assert(p->kind >= 0 && (size_t)p->kind < sizeof kind_names / sizeof kind_names[0]);
	int rc = th_json_put(o, "kind", json_object_new_string(kind_names[p->kind]));
	rc |= th_json_put(o, "required", json_object_new_boolean(p->required));
	if (p->kind == K_ENUM || p->kind == K_ICON) {
		const char *const *vals = p->kind == K_ENUM ? p->values : icon_names;
		json_object *a = json_object_new_array();
		rc |= th_json_put(o, "enum", a);
		for (size_t i = 0; a != NULL && vals[i] != NULL; i++) {
			json_object *s = json_object_new_string(vals[i]);
			if (s == NULL || json_object_array_add(a, s) != 0) {
				json_object_put(s);
				rc = -1;
			}
		}
	}
	if (rc != 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static int props_json(json_object *into, const struct prop *props)
{
	int rc = 0;
	for (size_t i = 0; i < MAX_PROPS && props[i].name != NULL; i++)
		rc |= th_json_put(into, props[i].name, prop_json(&props[i]));
	return rc;
}

json_object *th_a2ui_catalog_json(void)
{
	json_object *root = json_object_new_object();
	json_object *cs = json_object_new_object();
	json_object *fs = json_object_new_object();
	if (root == NULL) {
		json_object_put(cs);
		json_object_put(fs);
		return NULL;
	}
	int rc = th_json_put(root, "components", cs) | th_json_put(root, "functions", fs);
	if (rc != 0) {
		json_object_put(root);
		return NULL;
	}
	static const struct prop id_prop = {"id", K_CID, 1, NULL};
	static const struct prop component_prop = {"component", K_STR, 1, NULL};
	for (size_t i = 0; i < NCOMPS; i++) {
		json_object *c = json_object_new_object();
		json_object *ps = json_object_new_object();
		rc |= th_json_put(cs, comps[i].name, c);
		if (c == NULL || th_json_put(c, "properties", ps) != 0) {
			rc = -1;
			break;
		}
		rc |= th_json_put(ps, "id", prop_json(&id_prop));
		rc |= th_json_put(ps, "component", prop_json(&component_prop));
		rc |= props_json(ps, common_props);
		if (comps[i].checkable)
			rc |= th_json_put(ps, "checks", prop_json(&checkable_prop));
		rc |= props_json(ps, comps[i].props);
	}
	for (size_t i = 0; rc == 0 && i < NFNS; i++) {
		json_object *f = json_object_new_object();
		json_object *as = json_object_new_object();
		rc |= th_json_put(fs, fns[i].name, f);
		if (f == NULL || th_json_put(f, "args", as) != 0) {
			rc = -1;
			break;
		}
		rc |= th_json_put(f, "returns", json_object_new_string(fns[i].returns));
		rc |= th_json_put(f, "minOrMax", json_object_new_boolean(fns[i].min_or_max));
		rc |= props_json(as, fns[i].args);
	}
	if (rc != 0) {
		json_object_put(root);
		return NULL;
	}
	return root;
}
