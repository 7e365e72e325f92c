/* opts: the generic half of configuration. It knows types and sources, nothing
 * about which keys a program has. Line numbers come from our own reader, since
 * Debian's inih is built without INI_HANDLER_LINENO. */
#include "lib/opts.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/alloc.h"

#define FIELD(base, o, T) ((T *)((char *)(base) + (o)->off))

const char *const opt_path[] = { NULL };
const char *const opt_hostport[] = { NULL };

/* A setting's duration: "10" could mean seconds or minutes to its reader, so any but
 * 0 says its unit. */
static int parse_duration_with_unit(const char *val, uint64_t *out, const char **why)
{
    char *end;
    double v = strtod(val, &end);
    while (end != val && (*end == ' ' || *end == '\t'))
        end++;
    if (end != val && !*end && v != 0) {
        *why = "a duration needs its unit: 90s, 10m, 1h or 250ms (a bare number is refused)";
        return -1;
    }
    return parse_duration_ns(val, out, why);
}

/* HOST:PORT or [IPv6]:PORT (opt_hostport); NULL, or why not. */
static const char *bad_hostport(const char *v)
{
    const char *port;
    if (*v == '[') {
        const char *end = strchr(v, ']');
        if (!end || end == v + 1 || end[1] != ':')
            return "expected [IPv6]:PORT";
        port = end + 2;
    } else {
        const char *colon = strrchr(v, ':');
        if (!colon || colon == v)
            return "expected HOST:PORT";
        port = colon + 1;
    }
    if (!*port)
        return "expected HOST:PORT (no port)";
    if (*port >= '0' && *port <= '9') {
        char *end;
        errno = 0;
        unsigned long n = strtoul(port, &end, 10);
        if (*end || errno || n < 1 || n > 65535)
            return "the port must be a number from 1 to 65535";
        return NULL;
    }
    for (const char *p = port; *p; p++)     /* a service name (smtp, pop3s) */
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-'))
            return "the port must be a number from 1 to 65535 or a service name";
    return NULL;
}

void strlist_add(struct strlist *l, const char *s)
{
    char **v = xrealloc(l->v, (l->n + 1) * sizeof *v);
    char *d = xstrdup(s);
    l->v = v;
    l->v[l->n++] = d;
}

void strlist_free(struct strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

static const struct opt *find(const struct opt *t, const char *section, const char *key)
{
    for (; t->key; t++)
        if (!strcasecmp(t->section, section) && !strcasecmp(t->key, key))
            return t;
    return NULL;
}

static int has_section(const struct opt *t, const char *section)
{
    for (; t->key; t++)
        if (!strcasecmp(t->section, section))
            return 1;
    return 0;
}

static size_t min2(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* Edits (insertions, deletions, substitutions, swaps of two neighbours: "smpt" is
 * one from "smtp") from a to b, ignoring case; words longer than 63 bytes are as
 * far as can be. Three rows of the optimal string alignment table. */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), r0[64], r1[64], r2[64];
    size_t *two = r0, *prev = r1, *cur = r2;
    if (la > 63 || lb > 63)
        return SIZE_MAX;
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            int ai = tolower((unsigned char)a[i - 1]), bj = tolower((unsigned char)b[j - 1]);
            cur[j] = min2(min2(prev[j] + 1, cur[j - 1] + 1), prev[j - 1] + (ai != bj));
            if (i > 1 && j > 1 && ai == tolower((unsigned char)b[j - 2]) && tolower((unsigned char)a[i - 2]) == bj)
                cur[j] = min2(cur[j], two[j - 2] + 1);
        }
        size_t *t = two;
        two = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

/* The nearest of the words to w, if near enough to be a slip (at most 2 edits, and
 * fewer than half of w's letters); NULL otherwise. */
static const char *nearest(const char *w, const char *const *words, size_t n)
{
    const char *best = NULL;
    size_t bd = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        size_t d = distance(w, words[i]);
        if (d < bd) {
            bd = d;
            best = words[i];
        }
    }
    return bd <= 2 && bd * 2 < strlen(w) ? best : NULL;
}

/* Why section.key is not in the table, with the nearest section or key when there
 * is a near one: "[smpt]: unknown section (did you mean [smtp]?)". */
static void unknown(const struct opt *t, const char *section, const char *key, char *err, size_t errlen)
{
    const char *words[256];
    size_t n = 0;
    for (const struct opt *o = t; o->key && n < 256; o++)
        if (!n || strcmp(words[n - 1], o->section))
            words[n++] = o->section;
    if (!has_section(t, section)) {
        const char *near = nearest(section, words, n);
        size_t m = (size_t)snprintf(err, errlen, "[%s]: unknown section", section);
        if (near && m < errlen)
            snprintf(err + m, errlen - m, " (did you mean [%s]?)", near);
        return;
    }
    n = 0;
    for (const struct opt *o = t; o->key && n < 256; o++)
        if (!strcasecmp(o->section, section))
            words[n++] = o->key;
    const char *near = nearest(key, words, n);
    size_t m = (size_t)snprintf(err, errlen, "%s.%s: unknown key", section, key);
    if (near && m < errlen)
        snprintf(err + m, errlen - m, " (did you mean %s.%s?)", section, near);
}

/* An enum's refusal: its values, and the nearest when there is a near one. */
static void not_a_choice(const struct opt *o, const char *val, char *err, size_t errlen)
{
    size_t n = 0, m;
    while (o->choices[n])
        n++;
    m = (size_t)snprintf(err, errlen, "%s.%s: not one of ", o->section, o->key);
    for (size_t i = 0; i < n && m < errlen; i++)
        m += (size_t)snprintf(err + m, errlen - m, "%s%s", i ? "|" : "", o->choices[i]);
    const char *near = nearest(val, o->choices, n);
    if (m < errlen && near)
        snprintf(err + m, errlen - m, ": '%s' (did you mean %s?)", val, near);
    else if (m < errlen)
        snprintf(err + m, errlen - m, ": '%s'", val);
}

static int parse_into(const struct opt *o, void *base, const char *val, int src, const char **why)
{
    switch (o->type) {
    case OPT_STR:
    case OPT_SECRET: {
        char **p = FIELD(base, o, char *);
        char *d = xstrdup(val);
        free(*p);
        *p = d;
        return 0;
    }
    case OPT_COUNT: return parse_count(val, FIELD(base, o, uint64_t), why);
    case OPT_BYTES: return parse_bytes(val, FIELD(base, o, uint64_t), why);
    case OPT_DURATION: return parse_duration_with_unit(val, FIELD(base, o, uint64_t), why);
    case OPT_RANGE: return parse_range(val, FIELD(base, o, struct range), 0, why);
    case OPT_BYTERANGE: return parse_range(val, FIELD(base, o, struct range), 1, why);
    case OPT_BOOL: return parse_bool(val, FIELD(base, o, int), why);
    case OPT_SHARD: return parse_shard(val, FIELD(base, o, struct shard), why);
    case OPT_STAGES: return parse_rate_stages(val, FIELD(base, o, struct rate_stages), why);
    case OPT_DOUBLE: return parse_double(val, FIELD(base, o, double), why);
    case OPT_ENUM:
        for (int i = 0; o->choices[i]; i++)
            if (!strcasecmp(o->choices[i], val)) {
                *FIELD(base, o, int) = i;
                return 0;
            }
        *why = "not one of its values";    /* opts_set says which (not_a_choice) */
        return -1;
    case OPT_LIST: {
        struct strlist *l = FIELD(base, o, struct strlist);
        if (*val && o->choices == opt_hostport && (*why = bad_hostport(val)))
            return -1;
        if (l->src != src) {
            strlist_free(l);
            l->src = src;
        }
        if (*val)
            strlist_add(l, val);
        return 0;
    }
    }
    *why = "internal: unknown type";
    return -1;
}

/* A number of the key's type as a double, for comparing it with its bounds. */
static double as_number(const struct opt *o, const void *field, int high)
{
    switch (o->type) {
    case OPT_DOUBLE: return *(const double *)field;
    case OPT_RANGE:
    case OPT_BYTERANGE: {
        const struct range *r = field;
        return (double)(high ? r->hi : r->lo);
    }
    default: return (double)*(const uint64_t *)field;
    }
}

static int is_number(const struct opt *o)
{
    return o->type == OPT_COUNT || o->type == OPT_BYTES || o->type == OPT_DURATION || o->type == OPT_DOUBLE ||
           o->type == OPT_RANGE || o->type == OPT_BYTERANGE;
}

/* A number's bounds (its choices: { MIN, MAX }), parsed with the key's own parser,
 * since a bound is written as a value is. */
static int in_bounds(const struct opt *o, const void *field, char *why, size_t whylen)
{
    if (!o->choices || !is_number(o))
        return 0;
    const char *min = o->choices[0] && *o->choices[0] ? o->choices[0] : NULL;
    const char *max = o->choices[0] && o->choices[1] && *o->choices[1] ? o->choices[1] : NULL;
    union { uint64_t u; double d; struct range r; } lo, hi;
    const char *bad = NULL;
    struct opt bare = *o;
    bare.off = 0;
    if ((min && parse_into(&bare, &lo, min, -1, &bad) < 0) || (max && parse_into(&bare, &hi, max, -1, &bad) < 0)) {
        snprintf(why, whylen, "internal: bad bound: %s", bad);
        return -1;
    }
    int below = min && as_number(o, field, 0) < as_number(o, &lo, 0);
    int above = max && as_number(o, field, 1) > as_number(o, &hi, 1);
    if (!below && !above)
        return 0;
    if (min && max)
        snprintf(why, whylen, "must be between %s and %s", min, max);
    else if (min)
        snprintf(why, whylen, "must be at least %s", min);
    else
        snprintf(why, whylen, "must be at most %s", max);
    return -1;
}

int opts_defaults(const struct opt *t, void *base, char *err, size_t errlen)
{
    for (const struct opt *o = t; o->key; o++) {
        const char *why = NULL;
        char bwhy[200];
        if (o->def && parse_into(o, base, o->def, -1, &why) < 0) {
            snprintf(err, errlen, "internal: default of %s.%s: %s", o->section, o->key, why);
            return -1;
        }
        if (o->def && in_bounds(o, FIELD(base, o, char), bwhy, sizeof bwhy) < 0) {
            snprintf(err, errlen, "internal: default of %s.%s: %s", o->section, o->key, bwhy);
            return -1;
        }
    }
    return 0;
}

int opts_set(const struct opt *t, void *base, const char *section, const char *key,
             const char *val, int src, char *err, size_t errlen)
{
    const struct opt *o = find(t, section, key);
    const char *why = NULL;
    if (!o) {
        unknown(t, section, key, err, errlen);
        return -1;
    }
    if (parse_into(o, base, val, src, &why) < 0) {
        if (o->type == OPT_ENUM)
            not_a_choice(o, val, err, errlen);
        else
            snprintf(err, errlen, "%s.%s: %s: '%s'", section, key, why, val);
        return -1;
    }
    char bwhy[200];
    if (in_bounds(o, FIELD(base, o, char), bwhy, sizeof bwhy) < 0) {
        snprintf(err, errlen, "%s.%s: %s: '%s'", section, key, bwhy, val);
        return -1;
    }
    return 0;
}

int opts_set_dotted(const struct opt *t, void *base, const char *arg, int src, char *err, size_t errlen)
{
    char section[64], key[64];
    const char *dot = strchr(arg, '.'), *eq = strchr(arg, '=');
    if (!dot || !eq || dot > eq || (size_t)(dot - arg) >= sizeof section || (size_t)(eq - dot - 1) >= sizeof key) {
        snprintf(err, errlen, "--set %s: expected section.key=value", arg);
        return -1;
    }
    memcpy(section, arg, (size_t)(dot - arg));
    section[dot - arg] = 0;
    memcpy(key, dot + 1, (size_t)(eq - dot - 1));
    key[eq - dot - 1] = 0;
    return opts_set(t, base, section, key, eq + 1, src, err, errlen);
}

struct file_ctx {
    const struct opt *t;
    void *base;
    FILE *f;
    int line, src, failed;
    int section_line;           /* of the last section header read */
    const char *path;
    const struct opts_extra *extra;
    char *err;
    size_t errlen;
};

/* inih's reader, counting lines and noting where each section header is (inih
 * calls back per key only: an unknown section is reported at its header's line,
 * not its first key's). It also refuses a section header without its ']', which
 * inih would let pass: the keys after it would land in the section before, and
 * the error would name them ("[smtp" then ".senders: unknown key" a line later). */
static char *count_lines(char *str, int num, void *stream)
{
    struct file_ctx *c = stream;
    char *r = fgets(str, num, c->f);
    if (!r || c->failed)
        return c->failed ? NULL : r;
    c->line++;
    const char *p = r;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '[' && !strchr(p, ']')) {
        size_t n = strcspn(p, "\r\n");
        snprintf(c->err, c->errlen, "%s:%d: '%.*s': a section header ends with ']'", c->path, c->line,
                 (int)(n < 60 ? n : 60), p);
        c->failed = 1;
        return NULL;
    }
    if (*p == '[')
        c->section_line = c->line;
    return r;
}

/* A relative path read from the file at file_path, taken against that file's
 * directory (into buf); other values as they are. */
static const char *beside(int is_path, const char *val, const char *file_path, char *buf, size_t n)
{
    const char *slash = strrchr(file_path, '/');
    if (!is_path || !*val || *val == '/' || !slash)
        return val;
    if ((size_t)snprintf(buf, n, "%.*s/%s", (int)(slash - file_path), file_path, val) >= n)
        return val;
    return buf;
}

static int on_kv(void *user, const char *section, const char *name, const char *value)
{
    struct file_ctx *c = user;
    char why[400];
    if (c->failed)
        return 1;
    char path[4096];
    if (c->extra && c->extra->claim(section)) {
        value = beside(c->extra->is_path && c->extra->is_path(section, name), value, c->path, path, sizeof path);
        if (c->extra->fn(c->extra->ud, section, name, value, why, sizeof why) < 0) {
            snprintf(c->err, c->errlen, "%s:%d: %s", c->path, c->line, why);
            c->failed = 1;
            return 0;
        }
        return 1;
    }
    const struct opt *o = find(c->t, section, name);
    value = beside(o && OPT_IS_PATH(o), value, c->path, path, sizeof path);
    if (opts_set(c->t, c->base, section, name, value, c->src, why, sizeof why) < 0) {
        int line = c->line;
        if (!has_section(c->t, section) && c->section_line)
            line = c->section_line;  /* the header is the mistake, not its keys */
        snprintf(c->err, c->errlen, "%s:%d: %s", c->path, line, why);
        c->failed = 1;
        return 0;
    }
    return 1;
}

int opts_load_file(const struct opt *t, void *base, const char *path, int src, char *err, size_t errlen)
{
    return opts_load_file_extra(t, base, path, src, NULL, err, errlen);
}

int opts_load_file_extra(const struct opt *t, void *base, const char *path, int src,
                         const struct opts_extra *extra, char *err, size_t errlen)
{
    struct file_ctx c = { .t = t, .base = base, .src = src, .path = path, .err = err,
                          .errlen = errlen, .extra = extra };
    c.f = fopen(path, "r");
    if (!c.f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int r = ini_parse_stream(count_lines, &c, on_kv, &c);
    fclose(c.f);
    if (c.failed)
        return -1;
    if (r != 0) {
        snprintf(err, errlen, "%s:%d: syntax error (expected [section] or key = value)", path, r);
        return -1;
    }
    return 0;
}

const struct opt *opts_find_flag(const struct opt *t, const char *flag)
{
    for (; t->key; t++)
        if (t->flag && !strcmp(t->flag, flag))
            return t;
    return NULL;
}

static void fmt_range(char *buf, size_t n, const struct range *r, int bytes)
{
    if (r->lo == r->hi)
        snprintf(buf, n, "%llu", (unsigned long long)r->lo);
    else
        snprintf(buf, n, "%llu-%llu", (unsigned long long)r->lo, (unsigned long long)r->hi);
    (void)bytes;
}

const char *opts_format(const struct opt *o, const void *base, char *buf, size_t n)
{
    void *b = (void *)(uintptr_t)base;
    buf[0] = 0;
    switch (o->type) {
    case OPT_STR: {
        const char *s = *FIELD(b, o, char *);
        snprintf(buf, n, "%s", s ? s : "");
        break;
    }
    case OPT_SECRET:
        snprintf(buf, n, "%s", *FIELD(b, o, char *) ? "***" : "");
        break;
    case OPT_COUNT:
    case OPT_BYTES:
        snprintf(buf, n, "%llu", (unsigned long long)*FIELD(b, o, uint64_t));
        break;
    case OPT_DURATION: {
        uint64_t ns = *FIELD(b, o, uint64_t);
        if (ns % 1000000000ull == 0)
            snprintf(buf, n, "%llus", (unsigned long long)(ns / 1000000000ull));
        else
            snprintf(buf, n, "%llums", (unsigned long long)(ns / 1000000ull));
        break;
    }
    case OPT_RANGE:
    case OPT_BYTERANGE:
        fmt_range(buf, n, FIELD(b, o, struct range), o->type == OPT_BYTERANGE);
        break;
    case OPT_BOOL:
        snprintf(buf, n, "%s", *FIELD(b, o, int) ? "yes" : "no");
        break;
    case OPT_SHARD: {
        const struct shard *sh = FIELD(b, o, struct shard);
        snprintf(buf, n, "%llu/%llu", (unsigned long long)sh->k, (unsigned long long)sh->n);
        break;
    }
    case OPT_STAGES:
        fmt_rate_stages(buf, n, FIELD(b, o, struct rate_stages));
        break;
    case OPT_DOUBLE:
        snprintf(buf, n, "%g", *FIELD(b, o, double));
        break;
    case OPT_ENUM:
        snprintf(buf, n, "%s", o->choices[*FIELD(b, o, int)]);
        break;
    case OPT_LIST: {
        const struct strlist *l = FIELD(b, o, struct strlist);
        size_t used = 0;
        for (size_t i = 0; i < l->n && used < n; i++)
            used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", l->v[i]);
        break;
    }
    }
    return buf;
}

static int set_cli_dotted(const struct opt *t, void *base, const struct opts_extra *extra, const char *arg,
                          char *err, size_t errlen)
{
    const char *eq = strchr(arg, '=');
    char section[200];
    if (extra && eq && (size_t)(eq - arg) < sizeof section) {
        memcpy(section, arg, (size_t)(eq - arg));
        section[eq - arg] = 0;
        char *dot = strrchr(section, '.');
        if (dot) {
            *dot = 0;
            if (extra->claim(section))
                return extra->fn(extra->ud, section, dot + 1, eq + 1, err, errlen);
        }
    }
    return opts_set_dotted(t, base, arg, 1000, err, errlen);
}

int opts_from_args(const struct opt *t, void *base, int argc, char **argv, const struct opts_cli *cli)
{
    char err[600];
    int src = 1;
    if (opts_defaults(t, base, err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", cli->prog, err);
        return 2;
    }
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            cli->usage(stdout);
            return 1;
        }
        if (strcmp(argv[i], "-c") && strcmp(argv[i], "--config"))
            continue;
        if (i + 1 >= argc) {
            fprintf(stderr, "%s: %s needs a file\n", cli->prog, argv[i]);
            return 2;
        }
        if (opts_load_file_extra(t, base, argv[++i], src++, cli->extra, err, sizeof err) < 0) {
            fprintf(stderr, "%s: %s\n", cli->prog, err);
            return 2;
        }
    }
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-c") || !strcmp(a, "--config")) {
            i++;
            continue;
        }
        if (cli->bare && cli->bare(base, a))
            continue;
        if (strncmp(a, "--", 2)) {
            fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", cli->prog, a);
            return 2;
        }
        char name[64];
        const char *val = strchr(a, '=');
        size_t n = val ? (size_t)(val - a - 2) : strlen(a + 2);
        if (n >= sizeof name) {
            fprintf(stderr, "%s: unknown option '%s'\n", cli->prog, a);
            return 2;
        }
        memcpy(name, a + 2, n);
        name[n] = 0;
        if (val)
            val++;
        else if (i + 1 < argc)
            val = argv[++i];
        else {
            fprintf(stderr, "%s: --%s needs a value\n", cli->prog, name);
            return 2;
        }
        if (!strcmp(name, "set")) {
            if (set_cli_dotted(t, base, cli->extra, val, err, sizeof err) < 0) {
                fprintf(stderr, "%s: --set: %s\n", cli->prog, err);
                return 2;
            }
            continue;
        }
        const struct opt *o = opts_find_flag(t, name);
        if (!o) {
            fprintf(stderr, "%s: unknown option '--%s' (see --help)\n", cli->prog, name);
            return 2;
        }
        if (opts_set(t, base, o->section, o->key, val, 1000, err, sizeof err) < 0) {
            fprintf(stderr, "%s: --%s: %s\n", cli->prog, name, err);
            return 2;
        }
    }
    return 0;
}

void opts_help(FILE *f, const struct opt *t)
{
    const char *section = "";
    for (; t->key; t++) {
        if (strcmp(section, t->section)) {
            section = t->section;
            fprintf(f, "\n[%s]\n", section);
        }
        char left[96];
        if (t->flag)
            snprintf(left, sizeof left, "  %s (--%s)", t->key, t->flag);
        else
            snprintf(left, sizeof left, "  %s", t->key);
        fprintf(f, "%-34s %s", left, t->help);
        if (t->type == OPT_ENUM) {
            fputs(" (", f);
            for (int i = 0; t->choices[i]; i++)
                fprintf(f, "%s%s", i ? "|" : "", t->choices[i]);
            fputs(")", f);
        }
        if (t->def && *t->def)
            fprintf(f, " [%s]", t->def);
        fputc('\n', f);
    }
}

/* Writes text as "; " comment lines of at most 78 columns, broken at spaces: inih
 * reads lines of at most 200 bytes, and the tail of a longer comment would be
 * parsed as a line of its own. */
static void comment(FILE *f, const char *text)
{
    enum { WIDTH = 78 - 2 };
    while (*text) {
        size_t n = strlen(text);
        if (n > WIDTH) {
            n = WIDTH;
            while (n > 0 && text[n] != ' ')
                n--;
            if (n == 0)              /* one word longer than a line: cut it */
                n = WIDTH;
        }
        fprintf(f, "; %.*s\n", (int)n, text);
        text += n;
        while (*text == ' ')
            text++;
    }
}

void opts_example(FILE *f, const struct opt *t)
{
    const char *section = "";
    char text[1024];
    for (; t->key; t++) {
        if (strcmp(section, t->section)) {
            section = t->section;
            fprintf(f, "\n[%s]\n", section);
        }
        size_t n = (size_t)snprintf(text, sizeof text, "%s", t->help);
        if (t->type == OPT_ENUM)
            for (int i = 0; t->choices[i] && n < sizeof text; i++)
                n += (size_t)snprintf(text + n, sizeof text - n, "%s%s", i ? "|" : " (", t->choices[i]);
        if (t->type == OPT_ENUM && n < sizeof text)
            n += (size_t)snprintf(text + n, sizeof text - n, ")");
        if (t->type == OPT_LIST && n < sizeof text)
            snprintf(text + n, sizeof text - n, "; repeat the key for several");
        comment(f, text);
        fprintf(f, ";%s = %s\n", t->key, t->def ? t->def : "");
    }
}

void opts_free(const struct opt *t, void *base)
{
    for (; t->key; t++) {
        if (t->type == OPT_STR || t->type == OPT_SECRET) {
            char **p = FIELD(base, t, char *);
            free(*p);
            *p = NULL;
        } else if (t->type == OPT_LIST) {
            strlist_free(FIELD(base, t, struct strlist));
        }
    }
}
