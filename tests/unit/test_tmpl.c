/* test_tmpl.c - the Mustache-subset engine and the unit parsers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "buf.h"
#include "render/tmpl.h"
#include "units.h"

static struct view *
sample(void)
{
	struct view *v = view_new_obj(), *l, *o;

	view_set_str(v, "name", "atlas");
	view_set_str(v, "xml", "a<b & \"c\"");
	view_set_str(v, "nl", "two\nlines");
	view_set_bool(v, "yes", true);
	view_set_bool(v, "no", false);
	view_set_str(v, "empty", "");
	l = view_add_list(v, "items");
	o = view_list_add_obj(l);
	view_set_str(o, "n", "1");
	o = view_list_add_obj(l);
	view_set_str(o, "n", "2");
	l = view_add_list(v, "words");
	view_list_add_str(l, "x");
	view_list_add_str(l, "y");
	view_add_list(v, "none");
	return v;
}

/* Renders text against sample() and compares with want (NULL: expect failure with errsub). */
static void
check(const char *text, enum tmpl_escape esc, const char *want, const char *errsub)
{
	struct view *v = sample();
	char err[256] = "";
	struct tmpl *t = tmpl_parse("t", text, strlen(text), err, sizeof(err));
	struct buf b;
	int rc = -1;

	buf_init(&b);
	if (t)
		rc = tmpl_render(t, v, esc, &b, err, sizeof(err));
	if (want) {
		if (rc != 0)
			fail_msg("render failed: %s", err);
		assert_string_equal(b.data ? b.data : "", want);
	} else {
		assert_true(rc != 0);
		if (!strstr(err, errsub))
			fail_msg("error '%s' lacks '%s'", err, errsub);
	}
	buf_clear(&b);
	tmpl_free(t);
	view_free(v);
}

static void
test_variables(void **state)
{
	(void)state;
	check("host {{name}}!", TMPL_ESC_CONF, "host atlas!", NULL);
	check("{{ name }}", TMPL_ESC_CONF, "atlas", NULL);
	check("{{xml}}", TMPL_ESC_XML, "a&lt;b &amp; &quot;c&quot;", NULL);
	check("{{{xml}}}|{{&xml}}", TMPL_ESC_XML, "a<b & \"c\"|a<b & \"c\"", NULL);
	check("{{yes}}/{{no}}", TMPL_ESC_CONF, "yes/no", NULL);
	check("{{nosuch}}", TMPL_ESC_CONF, NULL, "unknown variable 'nosuch'");
	check("a\n{{nl}}", TMPL_ESC_CONF, NULL, "t:2: value of 'nl' holds a line break");
	check("{{items}}", TMPL_ESC_CONF, NULL, "not a value");
}

static void
test_sections(void **state)
{
	(void)state;
	check("{{#items}}[{{n}}]{{/items}}", TMPL_ESC_CONF, "[1][2]", NULL);
	check("{{#words}}{{.}},{{/words}}", TMPL_ESC_CONF, "x,y,", NULL);
	check("{{#yes}}Y{{/yes}}{{#no}}N{{/no}}", TMPL_ESC_CONF, "Y", NULL);
	check("{{^no}}not{{/no}}{{^yes}}X{{/yes}}", TMPL_ESC_CONF, "not", NULL);
	check("{{#empty}}E{{/empty}}{{^empty}}e{{/empty}}", TMPL_ESC_CONF, "e", NULL);
	check("{{^none}}no items{{/none}}", TMPL_ESC_CONF, "no items", NULL);
	check("{{#missing}}M{{/missing}}", TMPL_ESC_CONF, "", NULL);
	/* outer names stay visible inside a section */
	check("{{#items}}{{name}}{{n}} {{/items}}", TMPL_ESC_CONF, "atlas1 atlas2 ", NULL);
	check("{{! a comment }}x", TMPL_ESC_CONF, "x", NULL);
}

static void
test_standalone_lines(void **state)
{
	(void)state;
	check("a\n{{#items}}\n  n={{n}}\n{{/items}}\nb\n", TMPL_ESC_CONF, "a\n  n=1\n  n=2\nb\n",
	      NULL);
	check("a\n  {{! comment }}  \nb", TMPL_ESC_CONF, "a\nb", NULL);
	check("x {{#yes}}y{{/yes}} z\n", TMPL_ESC_CONF, "x y z\n", NULL);
}

static void
test_parse_errors(void **state)
{
	(void)state;
	check("{{#a}}", TMPL_ESC_CONF, NULL, "never closed");
	check("{{/a}}", TMPL_ESC_CONF, NULL, "does not close");
	check("{{#a}}{{/b}}", TMPL_ESC_CONF, NULL, "does not close 'a'");
	check("x\n{{name", TMPL_ESC_CONF, NULL, "t:2: unclosed tag");
	check("{{> part}}", TMPL_ESC_CONF, NULL, "partials");
	check("{{=<% %>=}}", TMPL_ESC_CONF, NULL, "delimiter");
	check("{{bad name}}", TMPL_ESC_CONF, NULL, "bad tag name");
	check("{{{name}}", TMPL_ESC_CONF, NULL, "'}}}'");
}

static void
test_units(void **state)
{
	(void)state;
	uint64_t b;
	unsigned s;
	char buf[32];

	assert_int_equal(units_parse_size("2T", &b), 0);
	assert_int_equal(b, 2ULL << 40);
	assert_int_equal(units_parse_size("500G", &b), 0);
	assert_int_equal(b, 500ULL << 30);
	assert_int_equal(units_parse_size("1.5G", &b), 0);
	assert_int_equal(b, 3ULL << 29);
	assert_int_equal(units_parse_size("64MiB", &b), 0);
	assert_int_equal(b, 64ULL << 20);
	assert_int_equal(units_parse_size("4096", &b), 0);
	assert_int_equal(b, 4096);
	assert_int_equal(units_parse_size("2X", &b), -EINVAL);
	assert_int_equal(units_parse_size("T", &b), -EINVAL);
	assert_int_equal(units_parse_size("-1G", &b), -EINVAL);
	assert_int_equal(units_parse_size("99999999999P", &b), -ERANGE);
	assert_int_equal(units_parse_duration("10m", &s), 0);
	assert_int_equal(s, 600);
	assert_int_equal(units_parse_duration("1h30m", &s), 0);
	assert_int_equal(s, 5400);
	assert_int_equal(units_parse_duration("45", &s), 0);
	assert_int_equal(s, 45);
	assert_int_equal(units_parse_duration("1h30", &s), -EINVAL);
	assert_int_equal(units_parse_duration("5x", &s), -EINVAL);
	units_format_size(2ULL << 40, buf, sizeof(buf));
	assert_string_equal(buf, "2T");
	units_format_size(1536ULL << 20, buf, sizeof(buf));
	assert_string_equal(buf, "1536M");
	units_format_size(1000, buf, sizeof(buf));
	assert_string_equal(buf, "1000");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_variables),
		cmocka_unit_test(test_sections),
		cmocka_unit_test(test_standalone_lines),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_units),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
