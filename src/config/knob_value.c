/* knob_value.c - a knob's values: parsed and bounded by its row of the knob table, written
 * as its place expects, and which of them are unsafe or change what a client sees. Pure. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "knobs.h"
#include "units.h"

static int
parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!(*s >= '0' && *s <= '9'))
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return *end || errno ? -EINVAL : 0;
}

static void
range_text(const struct knob *k, char *buf, size_t len)
{
	char a[32], b[32];

	if (k->kind == KNOB_INT) {
		snprintf(buf, len, "%llu to %llu", (unsigned long long)k->min,
			 (unsigned long long)k->max);
		return;
	}
	units_format_size(k->min, a, sizeof(a));
	units_format_size(k->max, b, sizeof(b));
	snprintf(buf, len, "%s to %s", a, b);
}

static int
parse_size(const struct knob *k, const char *v, uint64_t *bytes, char *why, size_t whylen)
{
	char r[80];

	range_text(k, r, sizeof(r));
	if (units_parse_size(v, bytes) < 0) {
		snprintf(why, whylen,
			 "'%s' is not a size — write e.g. \"%s\" (bytes, or K, M, G "
			 "suffixes), %s",
			 v, k->candidates[1] ? k->candidates[1] : k->candidates[0], r);
		return -EINVAL;
	}
	if (*bytes < k->min || *bytes > k->max) {
		snprintf(why, whylen, "'%s' is out of range — use %s", v, r);
		return -EINVAL;
	}
	return 0;
}

static int
parse_sockopts(const struct knob *k, const char *value, char *out, size_t outlen, char *why,
	       size_t whylen)
{
	static const char *const words[] = {
		"TCP_NODELAY",	    "TCP_QUICKACK", "SO_KEEPALIVE", "IPTOS_LOWDELAY",
		"IPTOS_THROUGHPUT", "SO_RCVBUF",    "SO_SNDBUF",    NULL,
	};
	char copy[256], *tok, *save = NULL, seen[8] = { 0 };
	size_t used = 0, i;

	if (strlen(value) >= sizeof(copy) || !*value) {
		snprintf(why, whylen,
			 "socket options must be 1 to 255 characters — e.g. "
			 "\"TCP_NODELAY\"");
		return -EINVAL;
	}
	snprintf(copy, sizeof(copy), "%s", value);
	out[0] = '\0';
	for (tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(tok, '=');
		char item[64];

		if (eq)
			*eq = '\0';
		for (i = 0; words[i]; i++)
			if (strcasecmp(words[i], tok) == 0)
				break;
		if (!words[i]) {
			snprintf(why, whylen,
				 "socket option '%s' is not one nastune knows — use "
				 "TCP_NODELAY, TCP_QUICKACK, SO_KEEPALIVE, IPTOS_LOWDELAY, "
				 "IPTOS_THROUGHPUT, SO_RCVBUF=N, SO_SNDBUF=N",
				 tok);
			return -EINVAL;
		}
		if (seen[i]++) {
			snprintf(why, whylen, "socket option %s is given twice — keep one",
				 words[i]);
			return -EINVAL;
		}
		if ((strncmp(words[i], "SO_", 3) == 0 && strcmp(words[i], "SO_KEEPALIVE") != 0) !=
		    (eq != NULL)) {
			snprintf(why, whylen,
				 eq ? "socket option %s takes no value — write just "
				      "%s"
				    : "socket option %s needs a size — e.g. %s=262144",
				 words[i], words[i]);
			return -EINVAL;
		}
		if (eq) {
			uint64_t b;

			if (parse_size(k, eq + 1, &b, why, whylen) < 0)
				return -EINVAL;
			snprintf(item, sizeof(item), "%s=%llu", words[i], (unsigned long long)b);
		} else {
			snprintf(item, sizeof(item), "%s", words[i]);
		}
		if (used + strlen(item) + 2 > outlen) {
			snprintf(why, whylen, "socket options are too long");
			return -EINVAL;
		}
		used += (size_t)snprintf(out + used, outlen - used, "%s%s", used ? " " : "", item);
	}
	if (!used) {
		snprintf(why, whylen, "socket options are empty — e.g. \"TCP_NODELAY\"");
		return -EINVAL;
	}
	return 0;
}

int
knob_parse(const struct knob *k, const char *value, char *out, size_t outlen, char *why,
	   size_t whylen)
{
	uint64_t v, t[3];
	char r[80], list[160] = "";
	size_t i;

	if (!value || outlen == 0) {
		snprintf(why, whylen, "no value");
		return -EINVAL;
	}
	switch (k->kind) {
	case KNOB_ENUM:
		for (i = 0; k->words[i]; i++)
			if (strcasecmp(k->words[i], value) == 0) {
				snprintf(out, outlen, "%s", k->words[i]);
				return 0;
			}
		for (i = 0; k->words[i]; i++) {
			strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
			strncat(list, k->words[i], sizeof(list) - strlen(list) - 1);
		}
		snprintf(why, whylen, "'%s' is not valid — use one of: %s", value, list);
		return -EINVAL;
	case KNOB_SIZE:
		if (parse_size(k, value, &v, why, whylen) < 0)
			return -EINVAL;
		units_format_size(v, out, outlen);
		return 0;
	case KNOB_INT:
		range_text(k, r, sizeof(r));
		if (parse_u64(value, &v) < 0 || v < k->min || v > k->max) {
			snprintf(why, whylen, "'%s' is not a whole number from %s — e.g. \"%s\"",
				 value, r, k->candidates[0]);
			return -EINVAL;
		}
		snprintf(out, outlen, "%llu", (unsigned long long)v);
		return 0;
	case KNOB_TRIPLE: {
		char a[32], b[32], c[32], extra[2];

		if (sscanf(value, "%31s %31s %31s %1s", a, b, c, extra) != 3 ||
		    parse_size(k, a, &t[0], why, whylen) < 0 ||
		    parse_size(k, b, &t[1], why, whylen) < 0 ||
		    parse_size(k, c, &t[2], why, whylen) < 0 || t[0] > t[1] || t[1] > t[2]) {
			range_text(k, r, sizeof(r));
			snprintf(why, whylen,
				 "'%s' is not three ascending sizes \"min default "
				 "max\" — e.g. \"%s\" (each %s)",
				 value, k->candidates[1], r);
			return -EINVAL;
		}
		snprintf(out, outlen, "%llu %llu %llu", (unsigned long long)t[0],
			 (unsigned long long)t[1], (unsigned long long)t[2]);
		return 0;
	}
	case KNOB_SOCKOPTS:
		return parse_sockopts(k, value, out, outlen, why, whylen);
	case KNOB_VERSIONS: {
		bool v3 = false, v4 = false, ok = *value != '\0';
		const char *p;

		for (p = value; *p && ok; p++) {
			if (*p == '3' && !v3)
				v3 = true;
			else if (*p == '4' && !v4)
				v4 = true;
			else if (*p != ',' && *p != ' ')
				ok = false;
			else if (*p == ',' && (p == value || p[1] == '\0'))
				ok = false;
		}
		if (!ok || (!v3 && !v4) || (v3 && v4 && !strchr(value, ','))) {
			snprintf(why, whylen,
				 "'%s' is not a set of NFS versions — use \"3,4\", \"3\" "
				 "or \"4\"",
				 value);
			return -EINVAL;
		}
		snprintf(out, outlen, "%s", v3 && v4 ? "3,4" : v3 ? "3" : "4");
		return 0;
	}
	case KNOB_PATH:
		/* The daemons' parsers end a value at ';' or '#' and split at blanks. */
		if (value[0] != '/' || strlen(value) >= 200 || strpbrk(value, " \t\"';#\\") ||
		    strstr(value, "/../") || strstr(value, "//")) {
			snprintf(why, whylen,
				 "'%s' is not an absolute path without blanks, quotes, ';', '#' "
				 "or '..' — e.g. \"%s\"",
				 value, k->candidates[0]);
			return -EINVAL;
		}
		snprintf(out, outlen, "%s", value);
		if (strlen(out) > 1 && out[strlen(out) - 1] == '/')
			out[strlen(out) - 1] = '\0';
		return 0;
	}
	snprintf(why, whylen, "unknown knob kind");
	return -EINVAL;
}

void
knob_render_value(const struct knob *k, const char *value, char *out, size_t outlen)
{
	uint64_t v;

	if (k->kind == KNOB_SIZE && units_parse_size(value, &v) == 0)
		snprintf(out, outlen, "%llu", (unsigned long long)v);
	else if (k->kind == KNOB_VERSIONS)
		snprintf(out, outlen, "%s", strcmp(value, "3,4") == 0 ? "3, 4" : value);
	else
		snprintf(out, outlen, "%s", value);
}

size_t
knob_render_lines(const struct knob *k, const char *value, struct knob_line *lines)
{
	if (k->id == KNOB_SMB_NAME_CASE) {
		bool keep = strcmp(value, "preserve") == 0;

		/* "preserve" is Samba's own behaviour: lower as the default case, names kept. */
		lines[0].param = "default case";
		snprintf(lines[0].value, sizeof(lines[0].value), "%s", keep ? "lower" : value);
		lines[1].param = "preserve case";
		lines[2].param = "short preserve case";
		snprintf(lines[1].value, sizeof(lines[1].value), "%s", keep ? "yes" : "no");
		snprintf(lines[2].value, sizeof(lines[2].value), "%s", keep ? "yes" : "no");
		return 3;
	}
	lines[0].param = k->param;
	knob_render_value(k, value, lines[0].value, sizeof(lines[0].value));
	return 1;
}

bool
knob_value_visible(const struct knob *k, const char *value)
{
	size_t i;

	if (k->safety != KNOB_SEMANTICS || !value)
		return false;
	if (!k->visible)
		return !k->dflt || strcmp(value, k->dflt) != 0;
	for (i = 0; k->visible[i]; i++)
		if (strcmp(k->visible[i], value) == 0)
			return true;
	return false;
}

const char *
knob_client_change(const struct knob *k, const char *value)
{
	return knob_value_visible(k, value) ? k->changes : NULL;
}

bool
knob_value_unsafe(const struct knob *k, const char *value)
{
	size_t i;

	for (i = 0; k->unsafe && k->unsafe[i]; i++)
		if (strcmp(k->unsafe[i], value) == 0)
			return true;
	return false;
}
