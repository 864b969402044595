/* SPDX-License-Identifier: Apache-2.0 */
/* check_a2ui — the A2UI module (UI-1..UI-4, EXT-4): one passing payload and one failing payload
 * per validation rule, outbound and inbound, and the confirm surface round trip. JSON in this
 * file is written with single quotes, which j() turns into double quotes. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a2ui/a2ui.h"
#include "util/jsonx.h"

#define BASIC "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"

/* Parses s after turning every ' into "; the caller puts the result. */
static json_object *j(const char *s)
{
	char *t = strdup(s);
	ck_assert_ptr_nonnull(t);
	for (char *p = t; *p != '\0'; p++)
		if (*p == '\'')
			*p = '"';
	json_object *v = NULL;
	struct th_error e = {0};
	th_err rc = th_json_parse(t, strlen(t), 200, &v, &e);
	ck_assert_msg(rc == TH_OK, "test JSON does not parse: %s: %s", e.msg, t);
	free(t);
	return v;
}

static char *text_of(json_object *v)
{
	char *s = strdup(th_json_text(v));
	ck_assert_ptr_nonnull(s);
	return s;
}

static const struct th_a2ui_opts v09 = {"v0.9", 0};

#define CREATE(id)                                                                                 \
	"{'version':'v0.9','createSurface':{'surfaceId':'" id "','catalogId':'" BASIC "'}}"
#define UPDATE(id, comps)                                                                          \
	"{'version':'v0.9','updateComponents':{'surfaceId':'" id "','components':[" comps "]}}"
#define ROOT_TEXT "{'id':'root','component':'Text','text':'hi'}"

/* A surface "s" with a Card holding a Button "btn" that declares event "go" with a literal
 * "sku" and a bound "qty" in its context, and a Text "note". */
#define FORM                                                                                       \
	"[" CREATE("s") "," UPDATE(                                                                \
	    "s", "{'id':'root','component':'Card','child':'col'},"                                 \
	         "{'id':'col','component':'Column','children':['note','btn']},"                    \
	         "{'id':'note','component':'Text','text':'Order'},"                                \
	         "{'id':'btn','component':'Button','child':'lbl','action':{'event':"               \
	         "{'name':'go','context':{'sku':'A-17','qty':{'path':'/qty'}}}}},"                 \
	         "{'id':'lbl','component':'Text','text':'Go'}") "]"

static th_err apply(json_object *reg, const char *msgs, const struct th_a2ui_opts *o,
                    struct th_error *e)
{
	json_object *m = j(msgs);
	th_err rc = th_a2ui_apply(reg, m, o, e);
	json_object_put(m);
	return rc;
}

static void apply_ok(json_object *reg, const char *msgs)
{
	struct th_error e = {0};
	th_err rc = apply(reg, msgs, &v09, &e);
	ck_assert_msg(rc == TH_OK, "refused: %s", e.msg);
}

/* Applies msgs to reg expecting TH_EINVAL with want in the message, and reg unchanged. */
static void apply_fail_o(json_object *reg, const char *msgs, const struct th_a2ui_opts *o,
                         const char *want)
{
	struct th_error e = {0};
	char *before = text_of(reg);
	th_err rc = apply(reg, msgs, o, &e);
	ck_assert_msg(rc == TH_EINVAL, "expected TH_EINVAL (%s), got %s: %s", want, th_err_name(rc),
	              e.msg);
	ck_assert_msg(strstr(e.msg, want) != NULL, "message \"%s\" does not say \"%s\"", e.msg,
	              want);
	ck_assert_str_eq(before, th_json_text(reg));
	free(before);
}

static void apply_fail(json_object *reg, const char *msgs, const char *want)
{
	apply_fail_o(reg, msgs, &v09, want);
}

/* A fresh registry holding FORM. */
static json_object *form_registry(void)
{
	json_object *reg = json_object_new_object();
	apply_ok(reg, FORM);
	return reg;
}

/* ---------------------------------------------------------------- UI-1 outbound */

START_TEST(test_ui1_valid_surface_applies_and_records_registry)
{
	json_object *reg = form_registry();
	json_object *s = NULL, *c = NULL, *v = NULL;
	ck_assert(json_object_object_get_ex(json_object_object_get(reg, "surfaces"), "s", &s));
	ck_assert_str_eq(th_json_str(s, "catalogId"), BASIC);
	ck_assert(!json_object_get_boolean(json_object_object_get(s, "deleted")));
	ck_assert(json_object_object_get_ex(json_object_object_get(s, "components"), "btn", &c));
	ck_assert_str_eq(th_json_str(c, "component"), "Button");
	v = json_object_object_get(c, "event");
	ck_assert_str_eq(th_json_str(v, "name"), "go");
	ck_assert_str_eq(th_json_str(json_object_object_get(v, "context"), "sku"), "A-17");
	ck_assert_int_eq(json_object_array_length(json_object_object_get(c, "refs")), 1);
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_state_persists_across_calls)
{
	json_object *reg = json_object_new_object();
	apply_ok(reg, "[" CREATE("s") "]");
	apply_ok(reg, "[" UPDATE("s", "{'id':'root','component':'Card','child':'t'},"
	                              "{'id':'t','component':'Text','text':'a'}") "]");
	/* A later update may reference components sent earlier and replace them. */
	apply_ok(reg, "[" UPDATE("s", "{'id':'t','component':'Column','children':['u']},"
	                              "{'id':'u','component':'Text','text':'b'}") "]");
	apply_ok(reg,
	         "[{'version':'v0.9','updateDataModel':{'surfaceId':'s','path':'/a','value':1}}]");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_missing_version_refused)
{
	json_object *reg = json_object_new_object();
	apply_fail(reg, "[{'createSurface':{'surfaceId':'s','catalogId':'" BASIC "'}}]",
	           "missing version");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_wrong_version_refused)
{
	json_object *reg = json_object_new_object();
	apply_fail(
	    reg, "[{'version':'v0.9.1','createSurface':{'surfaceId':'s','catalogId':'" BASIC "'}}]",
	    "must be \"v0.9\"");
	apply_fail(reg, "[{'version':9,'createSurface':{'surfaceId':'s','catalogId':'" BASIC "'}}]",
	           "version");
	struct th_a2ui_opts o = {"v0.9.1", 0};
	apply_fail_o(reg, "[" CREATE("s") "]", &o, "must be \"v0.9.1\"");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_version_091_when_configured)
{
	json_object *reg = json_object_new_object();
	struct th_a2ui_opts o = {"v0.9.1", 0};
	struct th_error e = {0};
	ck_assert_int_eq(apply(reg,
	                       "[{'version':'v0.9.1','createSurface':{'surfaceId':'s',"
	                       "'catalogId':'" BASIC "'}}]",
	                       &o, &e),
	                 TH_OK);
	struct th_a2ui_opts bad = {"v0.8", 0};
	ck_assert_int_eq(apply(reg, "[" CREATE("t") "]", &bad, &e), TH_EINTERNAL);
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_fill_version_adds_version_on_success_only)
{
	json_object *reg = json_object_new_object();
	struct th_a2ui_opts o = {NULL, 1};
	struct th_error e = {0};
	json_object *m = j("[{'createSurface':{'surfaceId':'s','catalogId':'" BASIC "'}},"
	                   "{'updateComponents':{'surfaceId':'s','components':[" ROOT_TEXT "]}}]");
	ck_assert_int_eq(th_a2ui_apply(reg, m, &o, &e), TH_OK);
	for (size_t i = 0; i < 2; i++) {
		json_object *msg = json_object_array_get_idx(m, i);
		ck_assert_str_eq(th_json_str(msg, "version"), "v0.9");
		/* version comes first, as in every published example */
		ck_assert_int_eq(strncmp(th_json_text(msg), "{\"version\"", 10), 0);
	}
	json_object_put(m);
	m = j("[{'updateDataModel':{'surfaceId':'s'}},{'deleteSurface':{'surfaceId':'nope'}}]");
	char *before = text_of(m);
	ck_assert_int_eq(th_a2ui_apply(reg, m, &o, &e), TH_EINVAL);
	ck_assert_str_eq(before, th_json_text(m));
	free(before);
	json_object_put(m);
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_exactly_one_message_key)
{
	json_object *reg = json_object_new_object();
	apply_fail(reg,
	           "[{'version':'v0.9','createSurface':{'surfaceId':'s','catalogId':'" BASIC "'},"
	           "'deleteSurface':{'surfaceId':'s'}}]",
	           "more than one message key");
	apply_fail(reg, "[{'version':'v0.9'}]", "no message key");
	apply_fail(reg, "[{'version':'v0.9','beginRendering':{'surfaceId':'s'}}]",
	           "unknown key \"beginRendering\"");
	apply_fail(reg, "[{'version':'v0.9','createSurface':5}]", "must be an object");
	apply_fail(reg, "[5]", "must be an object");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_batch_shape)
{
	json_object *reg = json_object_new_object();
	struct th_error e = {0};
	apply_fail(reg, "{}", "must be a JSON array");
	apply_fail(reg, "[]", "must not be empty");
	json_object *many = json_object_new_array();
	for (int i = 0; i <= TH_A2UI_MAX_MESSAGES; i++)
		json_object_array_add(many,
		                      j("{'version':'v0.9','deleteSurface':{'surfaceId':'x'}}"));
	ck_assert_int_eq(th_a2ui_apply(reg, many, &v09, &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "more than 64"));
	ck_assert_int_eq(th_a2ui_apply(reg, NULL, &v09, &e), TH_EINVAL);
	json_object_put(many);
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_basic_catalog_only)
{
	json_object *reg = json_object_new_object();
	apply_fail(reg,
	           "[{'version':'v0.9','createSurface':{'surfaceId':'s','catalogId':"
	           "'https://a2ui.org/specification/v0_9_1/catalogs/basic/catalog.json'}}]",
	           "must be the basic catalog");
	apply_fail(reg,
	           "[{'version':'v0.9','createSurface':{'surfaceId':'s','catalogId':'urn:mine'}}]",
	           "must be the basic catalog");
	apply_fail(reg, "[{'version':'v0.9','createSurface':{'surfaceId':'s'}}]",
	           "missing required property \"catalogId\"");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_inline_catalog_refused)
{
	json_object *reg = json_object_new_object();
	apply_fail(reg,
	           "[{'version':'v0.9','createSurface':{'surfaceId':'s','catalogId':'" BASIC "',"
	           "'catalog':{'components':{}}}}]",
	           "inline catalog");
	apply_fail(reg,
	           "[{'version':'v0.9','createSurface':{'surfaceId':'s','catalogId':"
	           "{'components':{}}}}]",
	           "inline catalog");
	apply_fail(reg,
	           "[{'version':'v0.9','createSurface':{'surfaceId':'s','catalogId':'" BASIC "',"
	           "'inlineCatalogs':[{}]}}]",
	           "inline catalog");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_create_surface_fields)
{
	json_object *reg = json_object_new_object();
	apply_ok(reg, "[{'version':'v0.9','createSurface':{'surfaceId':'s','catalogId':'" BASIC "',"
	              "'theme':{'primaryColor':'#00BFFF','iconUrl':'https://x.org/i.png',"
	              "'agentDisplayName':'Bot','custom':1},'sendDataModel':true}}]");
	apply_fail(reg,
	           "[{'version':'v0.9','createSurface':{'surfaceId':'t','catalogId':'" BASIC "',"
	           "'theme':{'primaryColor':'red'}}}]",
	           "theme.primaryColor");
	apply_fail(reg,
	           "[{'version':'v0.9','createSurface':{'surfaceId':'t','catalogId':'" BASIC "',"
	           "'theme':{'iconUrl':'not a uri'}}}]",
	           "theme.iconUrl");
	apply_fail(reg,
	           "[{'version':'v0.9','createSurface':{'surfaceId':'t','catalogId':'" BASIC "',"
	           "'sendDataModel':'yes'}}]",
	           "sendDataModel");
	apply_fail(reg,
	           "[{'version':'v0.9','createSurface':{'surfaceId':'t','catalogId':'" BASIC "',"
	           "'extra':1}}]",
	           "unknown property \"extra\"");
	apply_fail(reg,
	           "[{'version':'v0.9','createSurface':{'surfaceId':'','catalogId':'" BASIC "'}}]",
	           "surfaceId must be a string of 1..256 bytes");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_unknown_component_type_refused)
{
	json_object *reg = json_object_new_object();
	apply_ok(reg, "[" CREATE("s") "]");
	apply_fail(reg, "[" UPDATE("s", "{'id':'root','component':'Carousel'}") "]",
	           "message 0 (updateComponents), component \"root\": unknown component type "
	           "\"Carousel\"");
	/* the v0.8 wrapper form is not a v0.9 component */
	apply_fail(reg, "[" UPDATE("s", "{'id':'root','Text':{'text':'hi'}}") "]",
	           "missing required property \"component\"");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_required_property_refused_when_missing)
{
	json_object *reg = json_object_new_object();
	apply_ok(reg, "[" CREATE("s") "]");
	apply_fail(reg, "[" UPDATE("s", "{'id':'root','component':'Text'}") "]",
	           "component \"root\": Text requires property \"text\"");
	apply_fail(reg, "[" UPDATE("s", "{'id':'root','component':'Button','child':'x'}") "]",
	           "Button requires property \"action\"");
	apply_fail(reg, "[" UPDATE("s", "{'component':'Text','text':'a'}") "]",
	           "missing required property \"id\"");
	apply_fail(reg,
	           "[" UPDATE("s", "{'id':'root','component':'Tabs','tabs':[{'title':'a'}]}") "]",
	           "missing required property \"child\"");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_enum_values_checked)
{
	json_object *reg = json_object_new_object();
	apply_ok(reg, "[" CREATE("s") "," UPDATE("s", "{'id':'root','component':'Text','text':'a',"
	                                              "'variant':'h1'}") "]");
	apply_fail(
	    reg,
	    "[" UPDATE("s", "{'id':'root','component':'Text','text':'a','variant':'huge'}") "]",
	    "variant: huge is not one of the enum values");
	apply_fail(reg, "[" UPDATE("s", "{'id':'root','component':'Icon','name':'unicorn'}") "]",
	           "unicorn is not one of the enum values");
	apply_fail(reg, "[" UPDATE("s", "{'id':'root','component':'Divider','axis':3}") "]",
	           "axis");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_unknown_property_refused)
{
	json_object *reg = json_object_new_object();
	apply_ok(reg, "[" CREATE("s") "]");
	/* the documentation's Button with "text" does not validate */
	apply_fail(reg,
	           "[" UPDATE("s", "{'id':'root','component':'Button','child':'l','text':'Go',"
	                           "'action':{'event':{'name':'go'}}},"
	                           "{'id':'l','component':'Text','text':'Go'}") "]",
	           "unknown property \"text\" for Button");
	apply_fail(reg,
	           "[" UPDATE("s", "{'id':'root','component':'Text','text':'a','checks':[]}") "]",
	           "unknown property \"checks\" for Text");
	apply_fail(reg,
	           "[" UPDATE("s", "{'id':'root','component':'Text','text':'a',"
	                           "'accessibility':{'role':'x'}}") "]",
	           "unknown property \"role\"");
	apply_fail(reg,
	           "[" UPDATE("s", "{'id':'root','component':'Button','child':'l',"
	                           "'action':{'event':{'name':'go','extra':1}}},"
	                           "{'id':'l','component':'Text','text':'Go'}") "]",
	           "unknown property \"extra\"");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_dynamic_values_checked)
{
	json_object *reg = json_object_new_object();
	apply_ok(reg,
	         "[" CREATE("s") "," UPDATE(
	             "s",
	             "{'id':'root','component':'Column','children':['a','b','c']},"
	             "{'id':'a','component':'Text','text':{'path':'/x'}},"
	             "{'id':'b','component':'Text','text':{'call':'formatNumber','args':{'value':"
	             "{'path':'/n'},'decimals':2},'returnType':'string'}},"
	             "{'id':'c','component':'CheckBox','label':'ok','value':{'call':'not','args':"
	             "{'value':{'path':'/v'}}}}") "]");
	apply_fail(reg, "[" UPDATE("s", "{'id':'a','component':'Text','text':5}") "]",
	           "text: expected a string or a binding, not a number");
	apply_fail(reg,
	           "[" UPDATE("s", "{'id':'a','component':'Text','text':{'path':'/x','y':1}}") "]",
	           "a data binding takes only \"path\"");
	apply_fail(reg, "[" UPDATE("s", "{'id':'a','component':'Text','text':{'path':'/a~2'}}") "]",
	           "not a JSON Pointer");
	apply_fail(reg,
	           "[" UPDATE("s", "{'id':'a','component':'Text','text':{'call':'not','args':"
	                           "{'value':true}}}") "]",
	           "returns boolean where string is expected");
	apply_fail(reg,
	           "[" UPDATE("s", "{'id':'a','component':'Text','text':{'call':'formatString',"
	                           "'args':{'value':'x'},'returnType':'number'}}") "]",
	           "returns string, not number");
	apply_fail(reg,
	           "[" UPDATE("s", "{'id':'a','component':'Text','text':{'call':'eval',"
	                           "'args':{}}}") "]",
	           "unknown function \"eval\"");
	apply_fail(reg,
	           "[" UPDATE("s", "{'id':'c','component':'CheckBox','label':'ok','value':"
	                           "{'call':'length','args':{'value':'x'}}}") "]",
	           "needs \"min\" or \"max\"");
	apply_fail(reg,
	           "[" UPDATE("s", "{'id':'c','component':'CheckBox','label':'ok','value':"
	                           "{'call':'not','args':{'value':true,'x':1}}}") "]",
	           "unknown argument \"x\"");
	apply_fail(reg,
	           "[" UPDATE("s", "{'id':'d','component':'DateTimeInput','value':'',"
	                           "'min':'yesterday'}") "]",
	           "not an ISO 8601 date");
	/* a time needs its zone, as RFC 3339 and the schema's "time" format say */
	apply_fail(reg,
	           "[" UPDATE("s", "{'id':'d','component':'DateTimeInput','value':'',"
	                           "'max':'12:00:00'}") "]",
	           "not an ISO 8601 date");
	apply_ok(reg,
	         "[" UPDATE("s", "{'id':'d','component':'DateTimeInput','value':'',"
	                         "'min':'12:00:00Z','max':'2026-12-31T23:59:59.5+01:00'}") "]");
	apply_fail(reg,
	           "[" UPDATE("s", "{'id':'b','component':'Button','child':'a','action':"
	                           "{'functionCall':{'call':'openUrl','args':{'url':"
	                           "'https://x.org/{a}'}}}}") "]",
	           "expected an absolute URI");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_function_call_nesting_capped)
{
	json_object *reg = json_object_new_object();
	apply_ok(reg, "[" CREATE("s") "]");
	/* five nested calls pass, six do not */
	apply_ok(
	    reg,
	    "[" UPDATE("s",
	               "{'id':'root','component':'CheckBox','label':'x','value':"
	               "{'call':'not','args':{'value':{'call':'not','args':{'value':{'call':'not',"
	               "'args':{'value':{'call':'not','args':{'value':{'call':'not','args':"
	               "{'value':true}}}}}}}}}}}") "]");
	apply_fail(
	    reg,
	    "[" UPDATE("s",
	               "{'id':'root','component':'CheckBox','label':'x','value':"
	               "{'call':'not','args':{'value':{'call':'not','args':{'value':{'call':'not',"
	               "'args':{'value':{'call':'not','args':{'value':{'call':'not','args':"
	               "{'value':{'call':'not','args':{'value':true}}}}}}}}}}}}}") "]",
	    "nested deeper than 5");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_root_required_once_components_exist)
{
	json_object *reg = json_object_new_object();
	apply_ok(reg, "[" CREATE("s") "]"); /* no components yet: no root needed */
	apply_fail(reg, "[" UPDATE("s", "{'id':'top','component':'Text','text':'a'}") "]",
	           "message 0 (updateComponents), surface \"s\": no component has id \"root\"");
	/* root may come in a later message of the same batch */
	apply_ok(reg, "[" UPDATE("s", "{'id':'t','component':'Text','text':'a'}") "," UPDATE(
	                  "s", "{'id':'root','component':'Card','child':'t'}") "]");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_references_resolve)
{
	static const char *const bad[] = {
	    UPDATE("s", "{'id':'root','component':'Card','child':'nope'}"),
	    UPDATE("s", "{'id':'root','component':'Row','children':['nope']}"),
	    UPDATE("s", "{'id':'root','component':'List','children':{'componentId':'nope',"
	                "'path':'/items'}}"),
	    UPDATE("s", "{'id':'root','component':'Tabs','tabs':[{'title':'a','child':'nope'}]}"),
	    UPDATE("s", "{'id':'root','component':'Modal','trigger':'nope','content':'x'},"
	                "{'id':'x','component':'Text','text':'x'}"),
	    UPDATE("s", "{'id':'root','component':'Modal','trigger':'x','content':'nope'},"
	                "{'id':'x','component':'Text','text':'x'}"),
	    UPDATE("s", "{'id':'root','component':'Button','child':'nope','action':{'event':"
	                "{'name':'a'}}}"),
	};
	json_object *reg = json_object_new_object();
	apply_ok(reg, "[" CREATE("s") "]");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char buf[1024];
		snprintf(buf, sizeof buf, "[%s]", bad[i]);
		apply_fail(reg, buf, "component \"root\" references unknown component \"nope\"");
	}
	apply_ok(reg,
	         "[" UPDATE("s", "{'id':'root','component':'Tabs','tabs':[{'title':'a',"
	                         "'child':'x'}]},{'id':'x','component':'Text','text':'x'}") "]");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_cycles_refused)
{
	json_object *reg = json_object_new_object();
	apply_ok(reg, "[" CREATE("s") "]");
	apply_fail(reg, "[" UPDATE("s", "{'id':'root','component':'Card','child':'root'}") "]",
	           "reference cycle");
	apply_fail(reg,
	           "[" UPDATE("s", "{'id':'root','component':'Card','child':'a'},"
	                           "{'id':'a','component':'Column','children':['b']},"
	                           "{'id':'b','component':'Card','child':'a'}") "]",
	           "reference cycle");
	/* a diamond is not a cycle */
	apply_ok(reg, "[" UPDATE("s", "{'id':'root','component':'Column','children':['a','b']},"
	                              "{'id':'a','component':'Card','child':'c'},"
	                              "{'id':'b','component':'Card','child':'c'},"
	                              "{'id':'c','component':'Text','text':'c'}") "]");
	/* a cycle made by replacing a component in a later call */
	apply_fail(reg, "[" UPDATE("s", "{'id':'c','component':'Card','child':'a'}") "]",
	           "reference cycle");
	json_object_put(reg);
}
END_TEST

/* A chain root -> c1 -> ... of n components in all. */
static char *chain(int n)
{
	size_t cap = (size_t)n * 96 + 512;
	char *s = malloc(cap);
	ck_assert_ptr_nonnull(s);
	size_t len = (size_t)snprintf(s, cap, "[%s", UPDATE("s", ""));
	len -= 3; /* drop "]}}" to append components */
	for (int i = 0; i < n; i++) {
		char id[16], next[16];
		snprintf(id, sizeof id, i == 0 ? "root" : "c%d", i);
		snprintf(next, sizeof next, "c%d", i + 1);
		if (i + 1 < n)
			len += (size_t)snprintf(s + len, cap - len,
			                        "%s{'id':'%s','component':'Card','child':'%s'}",
			                        i ? "," : "", id, next);
		else
			len += (size_t)snprintf(s + len, cap - len,
			                        ",{'id':'%s','component':'Text','text':'end'}", id);
	}
	snprintf(s + len, cap - len, "]}}]");
	return s;
}

START_TEST(test_ui1_depth_capped_at_50)
{
	json_object *reg = json_object_new_object();
	apply_ok(reg, "[" CREATE("s") "]");
	char *ok = chain(50), *deep = chain(51);
	apply_ok(reg, ok);
	json_object_put(reg);
	reg = json_object_new_object();
	apply_ok(reg, "[" CREATE("s") "]");
	apply_fail(reg, deep, "deeper than 50 components");
	free(ok);
	free(deep);
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_surface_state_machine)
{
	json_object *reg = json_object_new_object();
	apply_fail(reg, "[" UPDATE("s", ROOT_TEXT) "]",
	           "unknown surface \"s\": createSurface must come first");
	apply_fail(reg, "[{'version':'v0.9','updateDataModel':{'surfaceId':'s'}}]",
	           "unknown surface");
	apply_fail(reg, "[{'version':'v0.9','deleteSurface':{'surfaceId':'s'}}]",
	           "unknown surface");
	apply_ok(reg, "[" CREATE("s") "]");
	apply_fail(reg, "[" CREATE("s") "]", "already exists (no second createSurface)");
	apply_ok(reg, "[" UPDATE(
	                  "s", ROOT_TEXT) ",{'version':'v0.9','deleteSurface':{'surfaceId':'s'}}]");
	apply_fail(reg, "[" UPDATE("s", ROOT_TEXT) "]", "surface \"s\" was deleted");
	apply_fail(reg, "[{'version':'v0.9','updateDataModel':{'surfaceId':'s','value':1}}]",
	           "was deleted");
	apply_fail(reg, "[{'version':'v0.9','deleteSurface':{'surfaceId':'s'}}]", "was deleted");
	apply_fail(reg, "[" CREATE("s") "]", "a surface id is not reused");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_batch_is_atomic)
{
	json_object *reg = json_object_new_object();
	/* a valid createSurface followed by a bad update leaves nothing behind */
	apply_fail(reg, "[" CREATE("s") "," UPDATE("s", "{'id':'root','component':'Nope'}") "]",
	           "message 1 (updateComponents)");
	ck_assert_int_eq(json_object_object_length(reg), 0);
	apply_ok(reg, "[" CREATE("s") "]");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_component_ids_checked)
{
	json_object *reg = json_object_new_object();
	apply_ok(reg, "[" CREATE("s") "]");
	apply_fail(reg, "[" UPDATE("s", ROOT_TEXT "," ROOT_TEXT) "]",
	           "duplicate component id in one message");
	apply_fail(reg, "[" UPDATE("s", "{'id':'','component':'Text','text':'a'}") "]",
	           "components[0]: id must be a string of 1..256 bytes");
	apply_fail(reg, "[" UPDATE("s", "") "]", "must be a non-empty array");
	apply_fail(reg, "[" UPDATE("s", "5") "]", "must be an object");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_size_caps)
{
	json_object *reg = json_object_new_object();
	struct th_error e = {0};
	apply_ok(reg, "[" CREATE("s") "]");
	/* bytes per message */
	size_t big = TH_A2UI_MAX_MESSAGE_BYTES + 10;
	char *text = malloc(big + 1);
	memset(text, 'x', big);
	text[big] = '\0';
	json_object *m = j("[" UPDATE("s", ROOT_TEXT) "]");
	json_object *comp = json_object_array_get_idx(
	    json_object_object_get(
	        json_object_object_get(json_object_array_get_idx(m, 0), "updateComponents"),
	        "components"),
	    0);
	json_object_object_add(comp, "text", json_object_new_string(text));
	ck_assert_int_eq(th_a2ui_apply(reg, m, &v09, &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "over the limit of 262144"));
	json_object_put(m);
	free(text);
	/* components per surface */
	json_object *comps = json_object_new_array();
	json_object_array_add(comps, j("{'id':'root','component':'Text','text':'a'}"));
	for (int i = 0; i < TH_A2UI_MAX_COMPONENTS; i++) {
		json_object *c = j("{'component':'Text','text':'a'}");
		char id[16];
		snprintf(id, sizeof id, "t%d", i);
		json_object_object_add(c, "id", json_object_new_string(id));
		json_object_array_add(comps, c);
	}
	m = j("[{'version':'v0.9','updateComponents':{'surfaceId':'s'}}]");
	json_object_object_add(
	    json_object_object_get(json_object_array_get_idx(m, 0), "updateComponents"),
	    "components", comps);
	ck_assert_int_eq(th_a2ui_apply(reg, m, &v09, &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "more than 1000 components"));
	json_object_put(m);
	/* live surfaces per task */
	for (int i = 1; i < TH_A2UI_MAX_SURFACES; i++) {
		char buf[256];
		snprintf(buf, sizeof buf,
		         "[{'version':'v0.9','createSurface':{'surfaceId':'s%d','catalogId':'" BASIC
		         "'}}]",
		         i);
		apply_ok(reg, buf);
	}
	apply_fail(reg, "[" CREATE("one-too-many") "]", "more than 64 live surfaces");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_data_model_messages_checked)
{
	json_object *reg = json_object_new_object();
	apply_ok(
	    reg,
	    "[" CREATE(
	        "s") ",{'version':'v0.9','updateDataModel':{'surfaceId':'s',"
	             "'path':'/a/b~1c','value':{'x':[1,2]}}},{'version':'v0.9','updateDataModel':"
	             "{'surfaceId':'s'}}]");
	apply_fail(reg, "[{'version':'v0.9','updateDataModel':{'surfaceId':'s','path':'/a~'}}]",
	           "JSON Pointer");
	apply_fail(reg, "[{'version':'v0.9','updateDataModel':{'surfaceId':'s','path':3}}]",
	           "JSON Pointer");
	apply_fail(reg, "[{'version':'v0.9','updateDataModel':{'surfaceId':'s','op':'add'}}]",
	           "unknown property \"op\"");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui1_malformed_registry_never_crashes)
{
	struct th_error e = {0};
	json_object *m = j("[" CREATE("s") "]");
	ck_assert_int_eq(th_a2ui_apply(NULL, m, &v09, &e), TH_EINTERNAL);
	static const char *const regs[] = {
	    "[]",
	    "{'surfaces':5}",
	    "{'surfaces':{'s':5}}",
	    "{'surfaces':{'s':{'components':[]}}}",
	    "{'surfaces':{'s':{'components':{'c':{'refs':7}}}}}",
	};
	for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++) {
		json_object *reg = j(regs[i]);
		ck_assert_int_eq(th_a2ui_apply(reg, m, &v09, &e), TH_EINTERNAL);
		json_object *act = j("{'version':'v0.9','action':{'name':'a','surfaceId':'s',"
		                     "'sourceComponentId':'c','timestamp':'2026-01-01T00:00:00Z',"
		                     "'context':{}}}");
		ck_assert_int_eq(th_a2ui_check_action(reg, act, &e), TH_EINTERNAL);
		json_object_put(act);
		json_object_put(reg);
	}
	json_object_put(m);
}
END_TEST

START_TEST(test_ui1_odd_values_never_crash)
{
	static const char *const odd[] = {
	    "null",
	    "0",
	    "'x'",
	    "[null]",
	    "[[]]",
	    "[{}]",
	    "[{'version':null}]",
	    "[{'version':'v0.9','updateComponents':{'surfaceId':'s','components':[null,1,'a',[]]}}"
	    "]",
	    "[{'version':'v0.9','updateComponents':{'surfaceId':null}}]",
	    "[{'version':'v0.9','createSurface':{'surfaceId':['s'],'catalogId':null}}]",
	};
	struct th_error e = {0};
	for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
		json_object *reg = form_registry();
		json_object *v = j(odd[i]);
		ck_assert_int_ne(th_a2ui_apply(reg, v, &v09, &e), TH_OK);
		json_object *out = NULL;
		json_object *part = json_object_new_object();
		json_object_object_add(part, "mediaType",
		                       json_object_new_string(TH_A2UI_MEDIA_TYPE));
		json_object_object_add(part, "data", json_object_get(v));
		ck_assert_int_ne(th_a2ui_parse_client(part, &out, &e), TH_OK);
		ck_assert_ptr_null(out);
		ck_assert_int_ne(th_a2ui_check_action(reg, v, &e), TH_OK);
		json_object_put(part);
		json_object_put(v);
		json_object_put(reg);
	}
}
END_TEST

START_TEST(test_ui1_artifact_shape)
{
	json_object *m = j("[" CREATE("s") "]");
	json_object *a = th_a2ui_artifact(7, m);
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(th_json_str(a, "artifactId"), "a2ui:7");
	ck_assert_str_eq(th_json_str(a, "name"), "a2ui");
	json_object *part = json_object_array_get_idx(json_object_object_get(a, "parts"), 0);
	ck_assert_str_eq(th_json_str(part, "mediaType"), "application/a2ui+json");
	ck_assert_str_eq(th_json_str(json_object_object_get(part, "metadata"), "mimeType"),
	                 "application/a2ui+json");
	ck_assert_ptr_eq(json_object_object_get(part, "data"), m);
	json_object_put(m); /* the artifact holds its own reference */
	ck_assert(json_object_is_type(json_object_object_get(part, "data"), json_type_array));
	json_object_put(a);
	ck_assert_ptr_null(th_a2ui_artifact(1, NULL));
}
END_TEST

/* ---------------------------------------------------------------- UI-2 inbound */

#define ACTION(name, sid, cid, ctx)                                                                \
	"{'version':'v0.9','action':{'name':'" name "','surfaceId':'" sid "',"                     \
	"'sourceComponentId':'" cid "','timestamp':'2026-01-15T12:00:00Z','context':" ctx "}}"

/* Parses a part, expecting success, and returns the messages. */
static json_object *parse_ok(const char *part_json, size_t want)
{
	json_object *part = j(part_json), *out = NULL;
	struct th_error e = {0};
	th_err rc = th_a2ui_parse_client(part, &out, &e);
	ck_assert_msg(rc == TH_OK, "refused: %s", e.msg);
	ck_assert_int_eq(json_object_array_length(out), want);
	json_object_put(part);
	return out;
}

static void parse_fail(const char *part_json, const char *want)
{
	json_object *part = j(part_json), *out = NULL;
	struct th_error e = {0};
	th_err rc = th_a2ui_parse_client(part, &out, &e);
	ck_assert_msg(rc == TH_EINVAL, "expected TH_EINVAL (%s), got %s", want, th_err_name(rc));
	ck_assert_msg(strstr(e.msg, want) != NULL, "message \"%s\" does not say \"%s\"", e.msg,
	              want);
	ck_assert_ptr_null(out);
	json_object_put(part);
}

START_TEST(test_ui2_array_encoding_accepted)
{
	json_object *m =
	    parse_ok("{'data':[" ACTION(
	                 "go", "s", "btn",
	                 "{}") ","
	                       "{'version':'v0.9','error':{'code':'X','surfaceId':'s',"
	                       "'message':'m','extra':1}}],'mediaType':'application/a2ui+json'}",
	             2);
	json_object_put(m);
}
END_TEST

START_TEST(test_ui2_single_object_encoding_accepted)
{
	json_object *m =
	    parse_ok("{'data':" ACTION("go", "s", "btn",
	                               "{}") ","
	                                     "'metadata':{'mimeType':'application/a2ui+json'}}",
	             1);
	json_object_put(m);
	/* the legacy media type the Python SDK sends, at the part's top level */
	m = parse_ok("{'kind':'data','data':" ACTION("go", "s", "btn",
	                                             "{}") ","
	                                                   "'mimeType':'application/json+a2ui'}",
	             1);
	json_object_put(m);
}
END_TEST

START_TEST(test_ui2_messages_wrapper_accepted)
{
	json_object *m =
	    parse_ok("{'data':{'messages':[" ACTION("go", "s", "btn",
	                                            "{}") "]},"
	                                                  "'mediaType':'application/a2ui+json'}",
	             1);
	json_object_put(m);
	parse_fail("{'data':{'messages':[],'x':1},'mediaType':'application/a2ui+json'}",
	           "takes only an array");
	parse_fail("{'data':{'messages':[]},'mediaType':'application/a2ui+json'}", "no message");
}
END_TEST

START_TEST(test_ui2_both_versions_accepted)
{
	json_object *m = parse_ok("{'data':[{'version':'v0.9.1','action':{'name':'go',"
	                          "'surfaceId':'s','sourceComponentId':'btn','timestamp':"
	                          "'2026-01-15T12:00:00.123+02:00','context':{}}}],"
	                          "'mediaType':'application/a2ui+json'}",
	                          1);
	json_object_put(m);
}
END_TEST

START_TEST(test_ui2_bad_version_refused)
{
	parse_fail("{'data':[{'version':'v0.8','action':{}}],'mediaType':'application/a2ui+json'}",
	           "bad version \"v0.8\"");
	parse_fail("{'data':[{'version':'v1.0','action':{}}],'mediaType':'application/a2ui+json'}",
	           "bad version \"v1.0\"");
	parse_fail("{'data':[{'action':{}}],'mediaType':'application/a2ui+json'}",
	           "missing field version");
	parse_fail("{'data':{'userAction':{'name':'go'}},'mimeType':'application/a2ui+json'}",
	           "userAction is A2UI v0.8");
}
END_TEST

START_TEST(test_ui2_not_an_a2ui_part_refused)
{
	parse_fail("{'data':[" ACTION("go", "s", "btn", "{}") "],'mediaType':'application/json'}",
	           "not an A2UI part");
	parse_fail("{'text':'hello'}", "not an A2UI part");
	parse_fail("{'mediaType':'application/a2ui+json'}", "has no data");
	parse_fail("{'data':'x','mediaType':'application/a2ui+json'}", "must be an array");
	ck_assert(!th_a2ui_is_part(NULL));
}
END_TEST

START_TEST(test_ui2_missing_fields_refused)
{
	static const char *const fields[] = {"name", "surfaceId", "sourceComponentId", "timestamp",
	                                     "context"};
	for (size_t i = 0; i < 5; i++) {
		json_object *part = j("{'data':[" ACTION(
		    "go", "s", "btn", "{}") "],"
		                            "'mediaType':'application/a2ui+json'}");
		json_object *act = json_object_object_get(
		    json_object_array_get_idx(json_object_object_get(part, "data"), 0), "action");
		json_object_object_del(act, fields[i]);
		json_object *out = NULL;
		struct th_error e = {0};
		ck_assert_int_eq(th_a2ui_parse_client(part, &out, &e), TH_EINVAL);
		char want[64];
		snprintf(want, sizeof want, "missing field action.%s", fields[i]);
		ck_assert_msg(strstr(e.msg, want) != NULL, "%s lacks %s", e.msg, want);
		json_object_put(part);
	}
	parse_fail("{'data':[{'version':'v0.9'}],'mediaType':'application/a2ui+json'}",
	           "missing field action");
	parse_fail("{'data':[{'version':'v0.9','error':{'code':'VALIDATION_FAILED','surfaceId':'s',"
	           "'message':'m'}}],'mediaType':'application/a2ui+json'}",
	           "missing field error.path");
}
END_TEST

START_TEST(test_ui2_malformed_fields_refused)
{
	parse_fail("{'data':[{'version':'v0.9','action':{'name':'go','surfaceId':'s',"
	           "'sourceComponentId':'btn','timestamp':'yesterday','context':{}}}],"
	           "'mediaType':'application/a2ui+json'}",
	           "RFC 3339");
	parse_fail("{'data':[{'version':'v0.9','action':{'name':'go','surfaceId':'s',"
	           "'sourceComponentId':'btn','timestamp':'2026-02-30T00:00:00Z','context':{}}}],"
	           "'mediaType':'application/a2ui+json'}",
	           "RFC 3339");
	parse_fail(
	    "{'data':[" ACTION("go", "s", "btn", "[]") "],'mediaType':'application/a2ui+json'}",
	    "action.context must be an object");
	parse_fail("{'data':[{'version':'v0.9','action':{'name':'go','surfaceId':'s',"
	           "'sourceComponentId':'btn','timestamp':'2026-01-15T12:00:00Z','context':{},"
	           "'extra':1}}],'mediaType':'application/a2ui+json'}",
	           "unknown field action.extra");
	parse_fail("{'data':[{'version':'v0.9','action':{'name':'','surfaceId':'s',"
	           "'sourceComponentId':'btn','timestamp':'2026-01-15T12:00:00Z','context':{}}}],"
	           "'mediaType':'application/a2ui+json'}",
	           "action.name");
	parse_fail("{'data':[{'version':'v0.9','action':{},'error':{}}],"
	           "'mediaType':'application/a2ui+json'}",
	           "both action and error");
	parse_fail("{'data':[{'version':'v0.9','action':{},'x':1}],"
	           "'mediaType':'application/a2ui+json'}",
	           "unknown key \"x\"");
}
END_TEST

START_TEST(test_ui2_too_many_messages_refused)
{
	json_object *part = j("{'mediaType':'application/a2ui+json'}");
	json_object *list = json_object_new_array();
	for (int i = 0; i <= TH_A2UI_MAX_CLIENT_MESSAGES; i++)
		json_object_array_add(list, j(ACTION("go", "s", "btn", "{}")));
	json_object_object_add(part, "data", list);
	json_object *out = NULL;
	struct th_error e = {0};
	ck_assert_int_eq(th_a2ui_parse_client(part, &out, &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "more than 16"));
	json_object_put(part);
}
END_TEST

START_TEST(test_ui2_inline_catalog_refused)
{
	parse_fail(
	    "{'data':[" ACTION(
	        "go", "s", "btn",
	        "{}") "],'mediaType':'application/a2ui+json',"
	              "'metadata':{'a2uiClientCapabilities':{'v0.9':{'supportedCatalogIds':['" BASIC
	              "'],"
	              "'inlineCatalogs':[{'catalogId':'mine','components':{}}]}}}}",
	    "inline catalog");
	parse_fail("{'data':[{'version':'v0.9','inlineCatalogs':[{}],'action':{}}],"
	           "'mediaType':'application/a2ui+json'}",
	           "inline catalog");
	parse_fail("{'data':[{'version':'v0.9','createSurface':{'surfaceId':'s','catalogId':'x'}}],"
	           "'mediaType':'application/a2ui+json'}",
	           "inline catalog");
	json_object *meta = j("{'a2uiClientCapabilities':{'inlineCatalogs':[{'catalogId':'x'}]}}");
	struct th_error e = {0};
	ck_assert_int_eq(th_a2ui_check_capabilities(meta, &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "inline catalog"));
	json_object_put(meta);
	meta = j("{'a2uiClientCapabilities':{'v0.9':{'supportedCatalogIds':['" BASIC "'],"
	         "'inlineCatalogs':[]}}}");
	ck_assert_int_eq(th_a2ui_check_capabilities(meta, &e), TH_OK);
	json_object_put(meta);
	ck_assert_int_eq(th_a2ui_check_capabilities(NULL, &e), TH_OK);
	meta = j("{'a2uiClientCapabilities':'basic'}");
	ck_assert_int_eq(th_a2ui_check_capabilities(meta, &e), TH_EINVAL);
	json_object_put(meta);
	/* an action message carrying an inline catalog is refused by check_action too */
	json_object *reg = form_registry();
	json_object *act = j("{'version':'v0.9','catalog':{},'action':{'name':'go','surfaceId':'s',"
	                     "'sourceComponentId':'btn','timestamp':'2026-01-15T12:00:00Z',"
	                     "'context':{}}}");
	ck_assert_int_eq(th_a2ui_check_action(reg, act, &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "inline catalog"));
	json_object_put(act);
	json_object_put(reg);
}
END_TEST

/* check_action on reg with the action msg, expecting want (NULL: success). */
static void action(json_object *reg, const char *msg, const char *want)
{
	json_object *m = j(msg);
	struct th_error e = {0};
	th_err rc = th_a2ui_check_action(reg, m, &e);
	if (want == NULL) {
		ck_assert_msg(rc == TH_OK, "refused: %s", e.msg);
	} else {
		ck_assert_msg(rc == TH_EINVAL, "expected TH_EINVAL (%s), got %s", want,
		              th_err_name(rc));
		ck_assert_msg(strstr(e.msg, want) != NULL, "message \"%s\" does not say \"%s\"",
		              e.msg, want);
	}
	json_object_put(m);
}

START_TEST(test_ui2_valid_action_accepted)
{
	json_object *reg = form_registry();
	action(reg, ACTION("go", "s", "btn", "{'sku':'A-17','qty':'3'}"), NULL);
	action(reg, ACTION("go", "s", "btn", "{}"), NULL); /* a subset of the declared keys */
	/* a bound value is user input of any type */
	action(reg, ACTION("go", "s", "btn", "{'qty':{'anything':[1,2]}}"), NULL);
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui2_forged_surface_id_refused)
{
	json_object *reg = form_registry();
	action(reg, ACTION("go", "forged", "btn", "{}"), "unknown surface \"forged\"");
	json_object_put(reg);
	json_object *empty = json_object_new_object();
	action(empty, ACTION("go", "s", "btn", "{}"), "unknown surface");
	json_object_put(empty);
}
END_TEST

START_TEST(test_ui2_component_not_on_surface_refused)
{
	json_object *reg = form_registry();
	action(reg, ACTION("go", "s", "pay-btn", "{}"), "unknown component \"pay-btn\"");
	/* a component that exists but declares no event */
	action(reg, ACTION("go", "s", "note", "{}"), "no action event");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui2_action_name_mismatch_refused)
{
	json_object *reg = form_registry();
	action(reg, ACTION("pay", "s", "btn", "{}"), "action name mismatch");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui2_deleted_surface_refused)
{
	json_object *reg = form_registry();
	apply_ok(reg, "[{'version':'v0.9','deleteSurface':{'surfaceId':'s'}}]");
	action(reg, ACTION("go", "s", "btn", "{}"), "deleted surface \"s\"");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui2_oversized_context_refused)
{
	json_object *reg = form_registry();
	char *big = malloc(TH_A2UI_MAX_CONTEXT_BYTES + 200);
	int n = snprintf(big, 200, ACTION("go", "s", "btn", "{'qty':'"));
	memset(big + n - 2, 'x', TH_A2UI_MAX_CONTEXT_BYTES); /* overwrite the closing "}}" */
	strcpy(big + n - 2 + TH_A2UI_MAX_CONTEXT_BYTES, "'}}}");
	action(reg, big, "context too large");
	free(big);
	/* too many keys */
	json_object *m = j(ACTION("go", "s", "btn", "{}"));
	json_object *ctx = json_object_object_get(json_object_object_get(m, "action"), "context");
	for (int i = 0; i <= TH_A2UI_MAX_CONTEXT_KEYS; i++) {
		char k[16];
		snprintf(k, sizeof k, "k%d", i);
		json_object_object_add(ctx, k, json_object_new_int(i));
	}
	struct th_error e = {0};
	ck_assert_int_eq(th_a2ui_check_action(reg, m, &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "context too large"));
	json_object_put(m);
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui2_context_keys_and_literals_checked)
{
	json_object *reg = form_registry();
	action(reg, ACTION("go", "s", "btn", "{'price':0}"), "undeclared context key \"price\"");
	action(reg, ACTION("go", "s", "btn", "{'sku':'B-99'}"),
	       "context value mismatch for \"sku\"");
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui2_error_message_is_not_an_action)
{
	json_object *reg = form_registry();
	action(reg, "{'version':'v0.9','error':{'code':'X','surfaceId':'s','message':'m'}}",
	       "not an action");
	action(reg, "{'version':'v0.9','action':5}", "action must be an object");
	json_object_put(reg);
}
END_TEST

/* ---------------------------------------------------------------- UI-4 confirm */

START_TEST(test_ui4_confirm_surface_passes_apply)
{
	json_object *m = th_a2ui_confirm_surface("confirm-1", "Ship it?", NULL);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(json_object_array_length(m), 2);
	json_object *reg = json_object_new_object();
	struct th_error e = {0};
	ck_assert_msg(th_a2ui_apply(reg, m, &v09, &e) == TH_OK, "refused: %s", e.msg);
	json_object *comps = json_object_object_get(
	    json_object_object_get(json_object_object_get(reg, "surfaces"), "confirm-1"),
	    "components");
	ck_assert_str_eq(th_json_str(json_object_object_get(comps, "root"), "component"), "Card");
	ck_assert_str_eq(
	    th_json_str(json_object_object_get(json_object_object_get(comps, "approve"), "event"),
	                "name"),
	    TH_A2UI_CONFIRM_APPROVE);
	ck_assert_str_eq(
	    th_json_str(json_object_object_get(json_object_object_get(comps, "reject"), "event"),
	                "name"),
	    TH_A2UI_CONFIRM_REJECT);
	/* the question is the Text's literal text */
	json_object *upd =
	    json_object_object_get(json_object_array_get_idx(m, 1), "updateComponents");
	json_object *list = json_object_object_get(upd, "components");
	int found = 0;
	for (size_t i = 0; i < json_object_array_length(list); i++) {
		json_object *c = json_object_array_get_idx(list, i);
		if (strcmp(th_json_str(c, "id"), "question") == 0)
			found = strcmp(th_json_str(c, "text"), "Ship it?") == 0;
	}
	ck_assert(found);
	json_object_put(m);
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui4_approve_and_reject_actions_accepted)
{
	json_object *m = th_a2ui_confirm_surface("confirm-1", "Ship it?", NULL);
	json_object *reg = json_object_new_object();
	struct th_error e = {0};
	ck_assert_int_eq(th_a2ui_apply(reg, m, &v09, &e), TH_OK);
	action(reg, ACTION("approve", "confirm-1", "approve", "{}"), NULL);
	action(reg, ACTION("reject", "confirm-1", "reject", "{}"), NULL);
	action(reg, ACTION("approve", "confirm-1", "reject", "{}"), "action name mismatch");
	action(reg, ACTION("approve", "confirm-1", "approve", "{'answer':'yes'}"),
	       "undeclared context key");
	json_object_put(m);
	json_object_put(reg);
}
END_TEST

START_TEST(test_ui4_confirm_surface_arguments)
{
	ck_assert_ptr_null(th_a2ui_confirm_surface(NULL, "q", NULL));
	ck_assert_ptr_null(th_a2ui_confirm_surface("", "q", NULL));
	ck_assert_ptr_null(th_a2ui_confirm_surface("s", "", NULL));
	ck_assert_ptr_null(th_a2ui_confirm_surface("s", NULL, NULL));
	json_object *m = th_a2ui_confirm_surface("s", "q", "v0.9.1");
	ck_assert_str_eq(th_json_str(json_object_array_get_idx(m, 0), "version"), "v0.9.1");
	json_object *reg = json_object_new_object();
	struct th_a2ui_opts o = {"v0.9.1", 0};
	struct th_error e = {0};
	ck_assert_int_eq(th_a2ui_apply(reg, m, &o, &e), TH_OK);
	/* a second confirm with the same surface id is a second createSurface */
	ck_assert_int_eq(th_a2ui_apply(reg, m, &o, &e), TH_EINVAL);
	json_object_put(m);
	json_object_put(reg);
}
END_TEST

/* ---------------------------------------------------------------- EXT-4 */

static int supports(const char *meta, int activated)
{
	json_object *m = meta != NULL ? j(meta) : NULL;
	int r = th_a2ui_client_supports(m, activated);
	json_object_put(m);
	return r;
}

START_TEST(test_ext4_activation_or_capabilities_enable_surfaces)
{
	ck_assert(supports(NULL, 1));
	ck_assert(!supports(NULL, 0));
	ck_assert(!supports("{}", 0));
	ck_assert(supports(
	    "{'a2uiClientCapabilities':{'v0.9':{'supportedCatalogIds':['" BASIC "']}}}", 0));
	ck_assert(supports(
	    "{'a2uiClientCapabilities':{'v0.9.1':{'supportedCatalogIds':['" BASIC "']}}}", 0));
	ck_assert(supports(
	    "{'a2uiClientCapabilities':{'supportedCatalogIds':['urn:x','" BASIC "']}}", 0));
}
END_TEST

START_TEST(test_ext4_capabilities_without_basic_catalog_mean_text)
{
	ck_assert(
	    !supports("{'a2uiClientCapabilities':{'v0.9':{'supportedCatalogIds':['urn:x']}}}", 0));
	/* the client said what it renders, and the basic catalog is not among it */
	ck_assert(!supports("{'a2uiClientCapabilities':{'supportedCatalogIds':['urn:x']}}", 1));
	/* capabilities without a catalog list say nothing either way */
	ck_assert(supports("{'a2uiClientCapabilities':{}}", 1));
	ck_assert(!supports("{'a2uiClientCapabilities':5}", 0));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("a2ui");
	TCase *out = tcase_create("outbound");
	tcase_add_test(out, test_ui1_valid_surface_applies_and_records_registry);
	tcase_add_test(out, test_ui1_state_persists_across_calls);
	tcase_add_test(out, test_ui1_missing_version_refused);
	tcase_add_test(out, test_ui1_wrong_version_refused);
	tcase_add_test(out, test_ui1_version_091_when_configured);
	tcase_add_test(out, test_ui1_fill_version_adds_version_on_success_only);
	tcase_add_test(out, test_ui1_exactly_one_message_key);
	tcase_add_test(out, test_ui1_batch_shape);
	tcase_add_test(out, test_ui1_basic_catalog_only);
	tcase_add_test(out, test_ui1_inline_catalog_refused);
	tcase_add_test(out, test_ui1_create_surface_fields);
	tcase_add_test(out, test_ui1_unknown_component_type_refused);
	tcase_add_test(out, test_ui1_required_property_refused_when_missing);
	tcase_add_test(out, test_ui1_enum_values_checked);
	tcase_add_test(out, test_ui1_unknown_property_refused);
	tcase_add_test(out, test_ui1_dynamic_values_checked);
	tcase_add_test(out, test_ui1_function_call_nesting_capped);
	tcase_add_test(out, test_ui1_root_required_once_components_exist);
	tcase_add_test(out, test_ui1_references_resolve);
	tcase_add_test(out, test_ui1_cycles_refused);
	tcase_add_test(out, test_ui1_depth_capped_at_50);
	tcase_add_test(out, test_ui1_surface_state_machine);
	tcase_add_test(out, test_ui1_batch_is_atomic);
	tcase_add_test(out, test_ui1_component_ids_checked);
	tcase_add_test(out, test_ui1_size_caps);
	tcase_add_test(out, test_ui1_data_model_messages_checked);
	tcase_add_test(out, test_ui1_malformed_registry_never_crashes);
	tcase_add_test(out, test_ui1_odd_values_never_crash);
	tcase_add_test(out, test_ui1_artifact_shape);
	suite_add_tcase(s, out);

	TCase *in = tcase_create("inbound");
	tcase_add_test(in, test_ui2_array_encoding_accepted);
	tcase_add_test(in, test_ui2_single_object_encoding_accepted);
	tcase_add_test(in, test_ui2_messages_wrapper_accepted);
	tcase_add_test(in, test_ui2_both_versions_accepted);
	tcase_add_test(in, test_ui2_bad_version_refused);
	tcase_add_test(in, test_ui2_not_an_a2ui_part_refused);
	tcase_add_test(in, test_ui2_missing_fields_refused);
	tcase_add_test(in, test_ui2_malformed_fields_refused);
	tcase_add_test(in, test_ui2_too_many_messages_refused);
	tcase_add_test(in, test_ui2_inline_catalog_refused);
	tcase_add_test(in, test_ui2_valid_action_accepted);
	tcase_add_test(in, test_ui2_forged_surface_id_refused);
	tcase_add_test(in, test_ui2_component_not_on_surface_refused);
	tcase_add_test(in, test_ui2_action_name_mismatch_refused);
	tcase_add_test(in, test_ui2_deleted_surface_refused);
	tcase_add_test(in, test_ui2_oversized_context_refused);
	tcase_add_test(in, test_ui2_context_keys_and_literals_checked);
	tcase_add_test(in, test_ui2_error_message_is_not_an_action);
	suite_add_tcase(s, in);

	TCase *ui4 = tcase_create("confirm");
	tcase_add_test(ui4, test_ui4_confirm_surface_passes_apply);
	tcase_add_test(ui4, test_ui4_approve_and_reject_actions_accepted);
	tcase_add_test(ui4, test_ui4_confirm_surface_arguments);
	suite_add_tcase(s, ui4);

	TCase *ext = tcase_create("capabilities");
	tcase_add_test(ext, test_ext4_activation_or_capabilities_enable_surfaces);
	tcase_add_test(ext, test_ext4_capabilities_without_basic_catalog_mean_text);
	suite_add_tcase(s, ext);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
