/* report_messages: the report's messages section: those not delivered exactly once
 * that each run showed one by one, with the server's evidence, the pending said, and
 * the late ones (delivered intact) apart, a line each. */
#include "analyse/report_messages.h"

#include <stdio.h>

#include "analyse/timeline.h"
#include "lib/escape.h"

/* The late messages each run showed: delivered intact, first read by the sweep, a
 * line each, apart from the failures (their trails are in the result file). */
static void write_late(FILE *o, const struct result_set *rs)
{
    int any = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const struct result_messages *late = &rs->v[i].display.late;
        char name[300];
        for (size_t j = 0; j < late->n; j++) {
            const struct result_message *m = &late->v[j];
            if (!any)
                fputs("<h2 id=\"late\">Late messages: delivered intact, first read by the sweep</h2>\n"
                      "<table><thead><tr><th>run</th><th class=\"l\">message</th><th class=\"l\">queue id</th>"
                      "</tr></thead><tbody>\n", o);
            any = 1;
            run_name(name, sizeof name, rs, i);
            fputs("<tr class=\"late\"><td class=\"l\">", o);
            html_puts(o, name);
            fputs("</td><td class=\"l\"><code>", o);
            html_puts(o, m->message_id);
            fputs("</code> ", o);
            html_puts(o, m->mailbox);
            fputs("</td><td class=\"l\"><code>", o);
            html_puts(o, m->queue_id);
            fputs("</code></td></tr>\n", o);
        }
    }
    if (any)
        fputs("</tbody></table>\n", o);
}

/* One message not delivered exactly once: its run, outcome, ids, and the server's
 * evidence when a log was read. */
static void message_row(FILE *o, const char *run, const char *kind, const struct result_message *m)
{
    const struct result_evidence *ev = &m->ev;
    fputs("<tr><td class=\"l\">", o);
    html_puts(o, run);
    fputs("</td><td class=\"l\">", o);
    html_puts(o, kind);
    fputs("</td><td class=\"l\"><code>", o);
    html_puts(o, m->message_id);
    fputs("</code><br>", o);
    html_puts(o, m->mailbox);
    fputs("</td><td class=\"l\"><code>", o);
    html_puts(o, m->queue_id);
    fputs("</code></td><td class=\"wrap\">", o);
    if (ev->has) {
        html_puts(o, ev->cause);
        if (ev->cause_line) {
            fputs("<br><code>", o);
            html_puts(o, ev->cause_line);
            fputs("</code>", o);
        }
        fputs("</td><td class=\"wrap\"><details><summary>", o);
        html_puts(o, ev->lines);
        fputs(" lines</summary><pre>", o);
        for (size_t l = 0; l < ev->ntrail; l++) {
            html_puts(o, ev->trail[l]);
            fputc('\n', o);
        }
        fputs("</pre></details>", o);
    } else {
        fputs("</td><td class=\"wrap\">no server log was read", o);
    }
    fputs("</td></tr>\n", o);
}

/* The messages not delivered exactly once that each run showed one by one, with
 * the server's evidence: the cause and the log lines that name each message. The
 * pending are not among them: neither delivered nor proven lost, no trail is sought
 * for them; a line per run says how many. */
static void write_messages(FILE *o, const struct result_set *rs)
{
    static const char *const kinds[] = { "lost", "duplicated", "corrupted" };
    int any = 0;
    for (size_t i = 0; i < rs->n; i++)
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            const struct result_display *d = &rs->v[i].display;
            const struct result_messages *ex = k == 0 ? &d->lost : k == 1 ? &d->duplicated : &d->corrupted;
            char name[300];
            for (size_t j = 0; j < ex->n; j++) {
                if (!any)
                    fputs("<h2 id=\"messages\">Messages not delivered exactly once, with the server's evidence</h2>\n"
                          "<table><thead><tr><th>run</th><th class=\"l\">outcome</th><th class=\"l\">message</th>"
                          "<th class=\"l\">queue id</th><th class=\"l\">cause</th><th class=\"l\">trail in the "
                          "server's logs</th></tr></thead><tbody>\n", o);
                any = 1;
                run_name(name, sizeof name, rs, i);
                message_row(o, name, kinds[k], &ex->v[j]);
            }
        }
    if (any)
        fputs("</tbody></table>\n", o);
    for (size_t i = 0; i < rs->n; i++) {
        const struct result_value *p = &rs->v[i].display.fig[RF_PENDING];
        long long pending = p->has && p->integer ? (long long)p->v : 0;
        if (pending <= 0)
            continue;
        char name[300];
        run_name(name, sizeof name, rs, i);
        if (!any)
            fputs("<h2 id=\"messages\">Messages not delivered exactly once</h2>\n", o);
        any = 1;
        fputs("<p class=\"note\">", o);
        html_puts(o, name);
        fprintf(o, ": %lld pending message%s, neither delivered nor proven lost, not listed one by one (why: the "
                   "runs table's <i>pending because</i>).</p>\n", pending, pending == 1 ? "" : "s");
    }
}

void report_messages(FILE *o, const struct result_set *rs)
{
    write_messages(o, rs);
    write_late(o, rs);
}
