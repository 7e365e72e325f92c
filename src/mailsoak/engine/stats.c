/* stats: per-worker counting. The error table is a small array searched linearly:
 * errors are rare next to messages, and the table must be copyable as a block. */
#include "engine/stats.h"

#include "lib/printable.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *const lat_names[LAT_COUNT] = {
    "smtp.connect", "smtp.tls", "smtp.banner", "smtp.ehlo", "smtp.auth", "smtp.mail",
    "smtp.rcpt", "smtp.data", "smtp.eod", "smtp.quit", "smtp.message",
    "pop3.connect", "pop3.tls", "pop3.banner", "pop3.user", "pop3.pass", "pop3.stat",
    "pop3.list", "pop3.retr", "pop3.dele", "pop3.quit", "pop3.top",
    "delivery",
    "deliv.server", "deliv.poll", "poll.lag",
    "imap.connect", "imap.tls", "imap.banner", "imap.capability", "imap.login", "imap.select",
    "imap.list", "imap.fetch", "imap.store", "imap.expunge", "imap.logout",
    "imap.idle", "push.exists", "push.fetched", "imap.headers",
};

void stats_init(struct wstats *s, unsigned max_examples)
{
    memset(s, 0, sizeof *s);
    s->max_examples = max_examples > ERR_EXAMPLES_MAX ? ERR_EXAMPLES_MAX : max_examples;
}

static unsigned find_or_add(struct err_count *t, unsigned *n, const char *name)
{
    for (unsigned i = 0; i < *n; i++)
        if (!strcmp(t[i].name, name))
            return i;
    if (*n == ERR_CLASSES_MAX)
        return ERR_CLASSES_MAX - 1;  /* the last slot collects the overflow */
    snprintf(t[*n].name, ERR_NAME_LEN, "%s", *n == ERR_CLASSES_MAX - 1 ? "other" : name);
    t[*n].count = 0;
    return (*n)++;
}

/* Examples hold a server's words: they are made printable here, where they are
 * stored, so the table, the JSON and the terminal only ever see safe text. */
static void example_store(struct err_examples *e, unsigned max, const char *text, size_t len)
{
    if (e->n >= max || e->n >= ERR_EXAMPLES_MAX)
        return;
    printable(e->text[e->n++], ERR_EXAMPLE_LEN, text, len);
}

void stats_example(struct err_examples *e, unsigned max, const char *fmt, ...)
{
    /* printable() never shortens text, so what vsnprintf cuts here would not fit */
    char buf[2 * ERR_EXAMPLE_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    example_store(e, max, buf, strlen(buf));
}

void stats_snapshot(struct wstats *s, struct wsnap *out)
{
    out->c = s->c;
    memcpy(out->lat, s->cur, sizeof out->lat);
    for (unsigned k = 0; k < LAT_COUNT; k++)
        hist_reset(&s->cur[k]);
    out->nerr = s->nerr;
    memcpy(out->err, s->err, s->nerr * sizeof s->err[0]);
}

unsigned errs_add(struct err_count *dst, unsigned *ndst, const char *name, uint64_t count)
{
    unsigned j = find_or_add(dst, ndst, name);
    dst[j].count += count;
    return j;
}

void errs_merge(struct err_count *dst, unsigned *ndst, const struct err_count *src, unsigned nsrc)
{
    for (unsigned i = 0; i < nsrc; i++)
        errs_add(dst, ndst, src[i].name, src[i].count);
}

void stats_error_text(struct wstats *s, const char *name, const char *text, size_t len)
{
    unsigned i = errs_add(s->err, &s->nerr, name, 1);
    s->c.errors++;
    if (text)
        example_store(&s->ex[i], s->max_examples, text, len);
}

void stats_error(struct wstats *s, const char *name, const char *example)
{
    stats_error_text(s, name, example, example ? strlen(example) : 0);
}
