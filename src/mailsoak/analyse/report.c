/* report: the HTML page (effective config, summary table, the charts of chart.c,
 * examples, events, runs). Every string from a result file goes through html_puts.
 * report_csv.c writes the timeline as CSV, report_cli.c is `mailsoak report`. */
#include "analyse/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/chart.h"
#include "analyse/compare.h"
#include "analyse/compare_write.h"
#include "analyse/report_messages.h"
#include "lib/escape.h"
#include "lib/alloc.h"

static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",Roboto,\"DejaVu Sans\",sans-serif;"
    "margin:20px 28px;color:#222;background:#fff}\n"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:30px 0 10px;border-bottom:1px solid #ddd;"
    "padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}\n"
    ".note{color:#555;font-size:13px;max-width:1200px}\n"
    "table{border-collapse:collapse;font-size:13px;margin:4px 0}"
    "th,td{padding:3px 9px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}"
    "th:first-child,td.l{text-align:left}thead th{border-bottom:2px solid #ccc}\n"
    "td.wrap{white-space:normal;text-align:left;max-width:700px;word-break:break-word}\n"
    "td.best{color:#116b2a;font-weight:600}td.worst{color:#b3261e;font-weight:600}"
    ".spread{color:#888;font-weight:normal;font-size:12px}td.run,th.run{color:#666}\n"
    "tr.differs td{background:#fff8e1}\n"
    ".grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(664px,1fr));gap:14px}\n"
    ".grid.small{grid-template-columns:repeat(auto-fill,minmax(300px,1fr))}figure.empty p{margin:2px 0}\n"
    "figure.chart{margin:0;border:1px solid #e2e2e2;border-radius:4px;padding:8px 10px 6px}\n"
    "figcaption{font-weight:600;margin-bottom:2px}\n"
    ".legend{display:flex;flex-wrap:wrap;gap:3px 16px;font-size:12.5px;margin-top:2px}\n"
    ".legend i{display:inline-block;width:20px;height:3px;vertical-align:middle;margin-right:5px}"
    ".legend i.box{width:11px;height:11px}\n"
    "svg{display:block;max-width:100%;height:auto}svg text{font-size:11px;fill:#444}"
    "svg .xlabel,svg .ylabel{font-size:12px;fill:#222}\n"
    "svg .gridline{stroke:#ececec}svg .axis,svg .tick{stroke:#999}svg .lane-base{stroke:#ddd}\n"
    "svg .send-end{stroke:#666;stroke-dasharray:5 4}svg .event{stroke:#000;stroke-width:1.5;stroke-dasharray:2 3}"
    "svg .event-label{font-size:10.5px;fill:#000}\n"
    "path.series{fill:none;stroke-width:1.7;stroke-linejoin:round;stroke-opacity:.85}\n"
    "svg .hit{fill:#333}svg .nodata{fill:#999;font-size:14px}\n"
    ".scroll{overflow-x:auto;max-width:100%}\n"
    "td.died,p.died,ul.died{color:#b3261e}ul.answer{margin:6px 0 10px;padding-left:20px}"
    "li.answer{font-weight:600}\n"
    ".warn{background:#fff4e5;border:1px solid #f0b35a;padding:8px 12px;margin:10px 0}\n"
    "details{margin:6px 0}summary{cursor:pointer}code{font-size:12.5px}\n";

/* A measured number as a reader wants it: 180.3, 7.75, 0.0123; not 180.3290954. */
static void html_real(FILE *o, double x)
{
    fprintf(o, fabs(x) >= 100 ? "%.1f" : "%.4g", x);
}

/* A number of a result file as it was written: an integer exactly (a seed replays
 * the run), a real as html_real; nothing when the file lacks it. */
static void html_value(FILE *o, const struct result_value *v)
{
    if (!v->has)
        return;
    if (v->integer)
        fprintf(o, "%lld", (long long)v->v);
    else
        html_real(o, v->v);
}

/* A table cell with a value from a file, "-" when it has none. */
static void td_text(FILE *o, const char *text, const char *cls)
{
    fprintf(o, *cls ? "<td class=\"%s\">" : "<td%s>", cls);
    if (text)
        html_puts(o, text);
    else
        fputs("-", o);
    fputs("</td>", o);
}

static void td_fig(FILE *o, const struct result_value *v)
{
    fputs("<td>", o);
    if (v->has)
        html_value(o, v);
    else
        fputs("-", o);
    fputs("</td>", o);
}

/* Why unread mail is pending rather than lost: "queued 12, unswept 3" (the reasons
 * a run gave, those above zero), "-" for files without them. */
static void td_pending_reasons(FILE *o, const struct result_display *d)
{
    static const char *const why[] = { "queued", "peeked", "unswept", "unsettled" };
    static const enum result_fig fig[] = { RF_PENDING_QUEUED, RF_PENDING_PEEKED, RF_PENDING_UNSWEPT,
                                           RF_PENDING_UNSETTLED };
    int any = 0, known = 0;
    fputs("<td class=\"l\">", o);
    for (size_t k = 0; k < sizeof why / sizeof *why; k++) {
        const struct result_value *v = &d->fig[fig[k]];
        known |= v->has;
        if (!v->has || !v->integer || v->v <= 0)
            continue;
        fprintf(o, "%s%s %lld", any++ ? ", " : "", why[k], (long long)v->v);
    }
    fputs(known ? "" : "-", o);
    fputs("</td>", o);
}

static int any_verdict(const struct result_set *rs)
{
    for (size_t i = 0; i < rs->n; i++)
        if (rs->v[i].display.verdict.has)
            return 1;
    return 0;
}

/* Each run's verdict (result JSON "verdict"): its headline, the remedy, the gates
 * that failed with their measured values. Runs of files without one are skipped. */
static void write_verdicts(FILE *o, const struct result_set *rs)
{
    int any = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const struct result_verdict *v = &rs->v[i].display.verdict;
        if (!v->state || !v->headline)
            continue;
        if (!any++)
            fputs("<h2 id=\"verdict\">Verdict</h2>\n", o);
        fprintf(o, "<p class=\"%s\"><b>", strcmp(v->state, "proven") ? "warn" : "note");
        html_puts(o, rs->v[i].label);
        fputs("</b>: ", o);
        html_puts(o, v->headline);
        fputs("</p>\n", o);
        if (v->session_errors) {
            fputs("<p class=\"warn\">Sessions: ", o);
            html_puts(o, v->session_errors);
            fputs("</p>\n", o);
        }
        if (v->remedy) {
            fputs("<p class=\"note\">What to change: ", o);
            html_puts(o, v->remedy);
            fputs("</p>\n", o);
        }
        int failed = 0;
        for (size_t k = 0; k < v->ngates; k++) {
            if (v->gates[k].pass == 1)
                continue;
            fputs(failed++ ? "<li>" : "<p class=\"warn\">Failed gates:</p>\n<ul><li>", o);
            html_puts(o, v->gates[k].text ? v->gates[k].text : "");
            fputs("</li>", o);
        }
        if (failed)
            fprintf(o, "</ul>\n<p class=\"note\">Exit status %lld.</p>\n",
                    v->exit_status.integer ? (long long)v->exit_status.v : 0LL);
    }
}

static void write_runs(FILE *o, const struct result_set *rs)
{
    static const char *const sums[] = { "delivered", "lost", "pending", "foreign", "server_crashes" };
    static const enum result_fig fig[] = { RF_DELIVERED, RF_LOST, RF_PENDING, RF_FOREIGN, RF_SERVER_CRASHES };
    fputs("<h2 id=\"runs\">Runs</h2>\n<div class=\"scroll\"><table>\n<thead><tr><th>run</th><th>file</th>", o);
    for (size_t k = 0; k < RE_COUNT; k++)
        fprintf(o, "<th>%s</th>", result_env_names[k]);
    for (size_t k = 0; k < sizeof sums / sizeof *sums; k++) {
        fprintf(o, "<th>%s</th>", sums[k]);
        if (fig[k] == RF_PENDING)
            fputs("<th>pending because</th>", o);
    }
    fputs("</tr></thead>\n<tbody>\n", o);
    for (size_t i = 0; i < rs->n; i++) {
        const struct result_display *d = &rs->v[i].display;
        char name[300];
        run_name(name, sizeof name, rs, i);
        fputs("<tr><td class=\"l\">", o);
        html_puts(o, name);
        fputs("</td><td class=\"l\"><code>", o);
        html_puts(o, rs->v[i].path);
        fputs("</code></td>", o);
        for (size_t k = 0; k < RE_COUNT; k++)
            td_text(o, d->env[k], "");
        for (size_t k = 0; k < sizeof sums / sizeof *sums; k++) {
            td_fig(o, &d->fig[fig[k]]);
            if (fig[k] == RF_PENDING)
                td_pending_reasons(o, d);
        }
        fputs("</tr>\n", o);
    }
    fputs("</tbody></table></div>\n", o);
}

/* A log class with lines in it: the others are noise under "Examples". */
static int log_class_hit(const struct result_logclass *l)
{
    return l->count.has && l->count.integer && l->count.v > 0;
}

/* One row of the examples table: kind, class, the count of the class, the example. */
static void example_row(FILE *o, const char *kind, const char *cls, const struct result_value *count)
{
    fprintf(o, "<tr class=\"%s\"><td class=\"l\">%s</td><td class=\"l\">", kind, kind);
    html_puts(o, cls);
    fputs("</td><td>", o);
    if (count)
        html_value(o, count);
    fputs("</td><td class=\"wrap\">", o);
}

/* The count of class cls in c, or NULL. */
static const struct result_value *class_count(const struct result_classes *c, const char *cls)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->name[i].key, cls))
            return &c->count[i];
    return NULL;
}

/* The proof behind the ledger's red cells: each lost example (our id, the
 * Message-ID a server logs, its queue id, the mailbox, when it was accepted and when
 * its mailbox was last read in full) and each corruption example (what differed). */
static void ledger_examples(FILE *o, const struct result_display *d)
{
    for (size_t j = 0; j < d->lost.n; j++) {
        const struct result_message *e = &d->lost.v[j];
        example_row(o, "lost", "lost", &d->fig[RF_LOST]);
        fputs("<code>", o);
        html_puts(o, e->id);
        fputs("</code> <code>", o);
        html_puts(o, e->message_id);
        fputs("</code>", o);
        if (e->queue_id && *e->queue_id) {
            fputs(" queued as <code>", o);
            html_puts(o, e->queue_id);
            fputs("</code>", o);
        }
        fputs(" to <code>", o);
        html_puts(o, e->mailbox);
        fputs("</code>, accepted ", o);
        html_puts(o, e->accepted);
        fputs(", mailbox last read in full ", o);
        html_puts(o, e->mailbox_read);
        fputs("</td></tr>\n", o);
    }
    for (size_t j = 0; j < d->ncorruption; j++) {
        example_row(o, "corrupted", "corrupted", &d->fig[RF_CORRUPTED]);
        fputs("<code>", o);
        html_puts(o, d->corruption[j]);
        fputs("</code></td></tr>\n", o);
    }
}

/* A log class's rows: each example kept, or the class alone when it kept none. */
static void log_rows(FILE *o, const struct result_logclass *l)
{
    if (!l->nex) {
        example_row(o, "log", l->name, &l->count);
        fputs("</td></tr>\n", o);
    }
    for (size_t j = 0; j < l->nex; j++) {
        example_row(o, "log", l->name, &l->count);
        if (l->ex_t[j].has) {
            fputs("at ", o);
            html_real(o, l->ex_t[j].v);
            fputs(" s: ", o);
        }
        fputs("<code>", o);
        html_puts(o, l->ex_line[j]);
        fputs("</code></td></tr>\n", o);
    }
}

/* The ledger's examples, error replies and matching log lines kept by each run. A
 * run with lost or corrupted messages has its examples open. */
static void write_examples(FILE *o, const struct result_set *rs)
{
    fputs("<h2 id=\"examples\">Examples: lost and corrupted messages, errors, log lines</h2>\n", o);
    int any = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const struct result_display *d = &rs->v[i].display;
        size_t proofs = d->lost.n + d->ncorruption, hits = 0;
        for (size_t k = 0; k < d->nlog; k++)
            hits += log_class_hit(&d->log[k]);
        if (!d->nerror_classes && !hits && !proofs)
            continue;
        char name[300];
        run_name(name, sizeof name, rs, i);
        fprintf(o, "<details%s><summary>", proofs ? " open" : "");
        html_puts(o, name);
        fputs("</summary>\n<table><thead><tr><th>kind</th><th>class</th><th>count</th><th class=\"l\">example</th>"
              "</tr></thead><tbody>\n", o);
        ledger_examples(o, d);
        for (size_t k = 0; k < d->nerror_ex; k++) {
            example_row(o, "error", d->error_ex[k].key, class_count(&d->errors, d->error_ex[k].key));
            fputs("<code>", o);
            html_puts(o, d->error_ex[k].text);
            fputs("</code></td></tr>\n", o);
        }
        for (size_t k = 0; k < d->nlog; k++)
            if (log_class_hit(&d->log[k]))
                log_rows(o, &d->log[k]);
        fputs("</tbody></table></details>\n", o);
        any = 1;
    }
    if (!any)
        fputs("<p class=\"note\">No run lost or corrupted a message, kept an error reply or matched a log line."
              "</p>\n", o);
}

static void write_events(FILE *o, const struct result_set *rs)
{
    int any = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const struct result_display *d = &rs->v[i].display;
        char name[300];
        run_name(name, sizeof name, rs, i);
        for (size_t j = 0; j < d->nevents; j++) {
            const struct result_event *e = &d->events[j];
            if (!any)
                fputs("<h2 id=\"events\">Server events</h2>\n<table><thead><tr><th>run</th><th>t (s)</th>"
                      "<th class=\"l\">kind</th><th class=\"l\">text</th></tr></thead><tbody>\n", o);
            any = 1;
            fputs("<tr><td class=\"l\">", o);
            html_puts(o, name);
            fputs("</td><td>", o);
            html_puts(o, e->t_text);
            fputs("</td><td class=\"l\">", o);
            html_puts(o, e->kind);
            fputs("</td><td class=\"wrap\">", o);
            html_puts(o, e->text);
            fputs("</td></tr>\n", o);
        }
    }
    if (any)
        fputs("</tbody></table>\n", o);
}

/* Whether two runs' values of a setting are the same (both absent is the same). */
static int same_setting(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The settings that differ between runs (what makes the columns differ). */
static void write_config_diff(FILE *o, const struct result_set *rs)
{
    char name[300], **seen = NULL;
    size_t nseen = 0;
    int header = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const struct result_display *d = &rs->v[i].display;
        for (size_t c = 0; c < d->nconfig; c++)
            for (size_t k = 0; k < d->config[c].n; k++) {
                const char *sec = d->config[c].name, *key = d->config[c].kv[k].key;
                char id[600];
                snprintf(id, sizeof id, "%s.%s", sec, key);
                size_t x = 0;
                while (x < nseen && strcmp(seen[x], id))
                    x++;
                if (x < nseen)
                    continue;
                seen = xrealloc(seen, (nseen + 1) * sizeof *seen);
                seen[nseen++] = xstrdup(id);
                int same = 1;
                for (size_t j = 1; j < rs->n && same; j++)
                    same = same_setting(result_setting(&rs->v[0].display, sec, key),
                                        result_setting(&rs->v[j].display, sec, key));
                if (same)
                    continue;
                if (!header) {
                    fputs("<h3>Settings that differ between runs</h3>\n<div class=\"scroll\"><table><thead><tr><th>setting</th>", o);
                    for (size_t j = 0; j < rs->n; j++) {
                        run_name(name, sizeof name, rs, j);
                        fputs("<th class=\"l\">", o);
                        html_puts(o, name);
                        fputs("</th>", o);
                    }
                    fputs("</tr></thead><tbody>\n", o);
                    header = 1;
                }
                fputs("<tr class=\"differs\"><th>", o);
                html_puts(o, id);
                fputs("</th>", o);
                for (size_t j = 0; j < rs->n; j++)
                    td_text(o, result_setting(&rs->v[j].display, sec, key), "l");
                fputs("</tr>\n", o);
            }
    }
    for (size_t x = 0; x < nseen; x++)
        free(seen[x]);
    free(seen);
    if (header)
        fputs("</tbody></table></div>\n", o);
    else if (rs->n > 1)
        fputs("<p class=\"note\">All runs have the same configuration.</p>\n", o);
}

static void write_config(FILE *o, const struct result_set *rs)
{
    char name[300];
    fputs("<h2 id=\"config\">Effective configuration</h2>\n", o);
    write_config_diff(o, rs);
    /* then each run's full configuration */
    for (size_t i = 0; i < rs->n; i++) {
        const struct result_display *d = &rs->v[i].display;
        run_name(name, sizeof name, rs, i);
        fprintf(o, "<details%s><summary>", i == 0 ? " open" : "");
        html_puts(o, name);
        fputs(": <code>", o);
        html_puts(o, rs->v[i].path);
        fputs("</code></summary>\n", o);
        if (!d->nconfig) {
            fputs("<p class=\"note\">This file has no configuration.</p></details>\n", o);
            continue;
        }
        fputs("<table><tbody>\n", o);
        for (size_t c = 0; c < d->nconfig; c++) {
            const struct result_section *sec = &d->config[c];
            fputs("<tr><th colspan=\"2\">[", o);
            html_puts(o, sec->name);
            fputs("]</th></tr>\n", o);
            if (!sec->object) {
                fputs("<tr><td></td><td class=\"wrap\">", o);
                html_puts(o, sec->text);
                fputs("</td></tr>\n", o);
                continue;
            }
            for (size_t k = 0; k < sec->n; k++) {
                fputs("<tr><td class=\"l\">", o);
                html_puts(o, sec->kv[k].key);
                fputs("</td><td class=\"wrap\"><code>", o);
                html_puts(o, sec->kv[k].text);
                fputs("</code></td></tr>\n", o);
            }
        }
        fputs("</tbody></table></details>\n", o);
    }
}

/* The latency of every command and of delivery, in ms, a column group per run: the
 * percentiles each run measured over its whole window, which the charts show only
 * per interval. */
static void write_latency(FILE *o, const struct result_set *rs)
{
    static const char *const pct[] = { "p50", "p90", "p99", "max" };
    int shown[LAT_COUNT] = { 0 }, any = 0;
    for (size_t i = 0; i < rs->n; i++)
        for (unsigned k = 0; k < LAT_COUNT; k++)
            any |= shown[k] |= rs->v[i].lat[k].has;
    fputs("<h2 id=\"latency\">Latency</h2>\n", o);
    if (!any) {
        fputs("<p class=\"note\">No run recorded latencies.</p>\n", o);
        return;
    }
    fputs("<p class=\"note\">Milliseconds over each run's whole window, per command and for delivery (accepted to "
          "read). With pipelining, smtp.mail, smtp.rcpt and smtp.data are one group, timed from its write.</p>\n"
          "<div class=\"scroll\"><table class=\"latency\"><thead><tr><th></th>", o);
    for (size_t i = 0; i < rs->n; i++) {
        char name[300];
        run_name(name, sizeof name, rs, i);
        fprintf(o, "<th colspan=\"%zu\">", sizeof pct / sizeof *pct);
        html_puts(o, name);
        fputs("</th>", o);
    }
    fputs("</tr><tr><th>ms</th>", o);
    for (size_t i = 0; i < rs->n; i++)
        for (size_t p = 0; p < sizeof pct / sizeof *pct; p++)
            fprintf(o, "<th>%s</th>", pct[p]);
    fputs("</tr></thead><tbody>\n", o);
    for (unsigned k = 0; k < LAT_COUNT; k++) {
        if (!shown[k])
            continue;
        fputs("<tr><th>", o);
        html_puts(o, lat_names[k]);
        fputs("</th>", o);
        for (size_t i = 0; i < rs->n; i++) {
            const struct result_latency *l = &rs->v[i].lat[k];
            const double x[] = { l->p50, l->p90, l->p99, l->max };
            /* two decimals, as the run's own latency table prints them */
            for (size_t p = 0; p < sizeof pct / sizeof *pct; p++)
                if (l->has)
                    fprintf(o, "<td>%.2f</td>", x[p]);
                else
                    fputs("<td>-</td>", o);
        }
        fputs("</tr>\n", o);
    }
    fputs("</tbody></table></div>\n", o);
}

static const struct chart fixed_charts[] = {
    { "rate_in", "Messages sent per second", "messages/s", CHART_FIG, RI_RATE_IN, "", 0, CU_RATE, 0 },
    { "rate_out", "Messages read per second", "messages/s", CHART_FIG, RI_RATE_OUT, "", 0, CU_RATE, 0 },
    { "spool", "Spool: messages queued at the server", "messages", CHART_FIG, RI_SPOOL, "", 0, CU_COUNT, 0 },
    { "store_messages", "Store: messages in the mailboxes", "messages", CHART_FIG, RI_STORE_MESSAGES, "", 0,
      CU_COUNT, 0 },
    { "store_bytes", "Store: size of the mailboxes", "bytes", CHART_FIG, RI_STORE_BYTES, "", 0, CU_BYTES, 0 },
    { "mem", "Server memory (whole process set)", "bytes", CHART_FIG, RI_MEM, "", 0, CU_BYTES, 0 },
    { "input", "Server I/O: read operations per second", "ops/s", CHART_FIG, RI_INPUT, "", 0, CU_RATE, 1 },
    { "output", "Server I/O: write operations per second", "ops/s", CHART_FIG, RI_OUTPUT, "", 0, CU_RATE, 1 },
    { "ibytes", "Server I/O: bytes read per second", "bytes/s", CHART_FIG, RI_IBYTES, "", 0, CU_BYTES, 1 },
    { "obytes", "Server I/O: bytes written per second", "bytes/s", CHART_FIG, RI_OBYTES, "", 0, CU_BYTES, 1 },
    { "procs", "Server processes", "processes", CHART_FIG, RI_PROCS, "", 0, CU_COUNT, 0 },
    { "conns", "Client connections open", "connections", CHART_FIG, RI_CONNS, "", 0, CU_COUNT, 0 },
    { "errors", "Errors per second (all classes)", "errors/s", CHART_FIG, RI_ERRORS, "", 0, CU_RATE, 1 },
    { "log_hits", "Server log hits per second (all classes)", "hits/s", CHART_LOG_HITS, RI_COUNT, "", 0, CU_RATE, 1 },
    { "delivery_p50", "Delivery latency p50 (sent to read)", "ms", CHART_LATENCY, RI_COUNT, "delivery", 0, CU_MS, 0 },
    { "delivery_p99", "Delivery latency p99 (sent to read)", "ms", CHART_LATENCY, RI_COUNT, "delivery", 1, CU_MS, 0 },
};

static void sanitize_id(char *dst, size_t n, const char *src)
{
    size_t k = 0;
    for (; *src && k + 1 < n; src++)
        dst[k++] = ((*src >= 'a' && *src <= 'z') || (*src >= '0' && *src <= '9')) ? *src
                   : (*src >= 'A' && *src <= 'Z') ? (char)(*src - 'A' + 'a') : '_';
    dst[k] = 0;
}

/* The fixed charts, then a p99 chart per command found in any timeline. */
static struct chart *chart_list(const struct result_set *rs, size_t *n)
{
    struct classes cmds = { 0 };
    size_t nfixed = sizeof fixed_charts / sizeof *fixed_charts, *all = xcalloc(rs->n, sizeof *all), m = 0;
    for (size_t i = 0; i < rs->n; i++)
        all[i] = i;
    collect_classes(&cmds, rs, all, rs->n, CLASS_LATENCY);
    free(all);
    struct chart *c = xcalloc(nfixed + cmds.n, sizeof *c);
    memcpy(c, fixed_charts, sizeof fixed_charts);
    for (size_t i = 0; i < cmds.n; i++) {
        if (!strcmp(cmds.v[i], "delivery") || strlen(cmds.v[i]) >= 100)
            continue;       /* delivery has its own charts; a name that long is no command */
        struct chart *x = &c[nfixed + m++];
        char id[56];
        sanitize_id(id, sizeof id, cmds.v[i]);
        snprintf(x->id, sizeof x->id, "lat_%s", id);
        snprintf(x->title, sizeof x->title, "Latency of %s, p99", cmds.v[i]);
        snprintf(x->ylabel, sizeof x->ylabel, "ms");
        x->of = CHART_LATENCY;
        snprintf(x->lat, sizeof x->lat, "%s", cmds.v[i]);
        x->p99 = 1;
        x->unit = CU_MS;
    }
    *n = nfixed + m;
    classes_free(&cmds);
    return c;
}

int report_write_html(FILE *o, const struct result_set *rs, const char *workload_warning,
                      const struct cmp_missing *missing, size_t nmissing)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>mailsoak report: ", o);
    for (size_t g = 0; g < rs->ngroups; g++) {
        if (g)
            fputs(", ", o);
        html_puts(o, rs->groups[g].label);
    }
    fprintf(o, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>mailsoak report</h1>\n", css);
    fprintf(o, "<p class=\"note\">%zu run%s of %zu label%s", rs->n, rs->n == 1 ? "" : "s", rs->ngroups,
            rs->ngroups == 1 ? "" : "s");
    if (nmissing)
        fprintf(o, " and <a href=\"#summary\" class=\"died\">%zu run%s without a result</a> (named under the "
                "summary)", nmissing, nmissing == 1 ? "" : "s");
    if (rs->v[0].version) {
        fputs(", written by mailsoak ", o);
        html_puts(o, rs->v[0].version);
    }
    fputs(". Workload:", o);
    const struct result_display *d0 = &rs->v[0].display;
    if (!d0->nworkload)
        fputs(" not recorded", o);
    for (size_t k = 0; k < d0->nworkload; k++) {
        fputs(" <code>", o);
        html_puts(o, d0->workload[k].key);
        fputc('=', o);
        html_puts(o, d0->workload[k].text);
        fputs("</code>", o);
    }
    fputs(".</p>\n", o);
    if (workload_warning) {
        fputs("<p class=\"warn\">These runs are not comparable: ", o);
        html_puts(o, workload_warning);
        fputs(" (compared anyway because of --force).</p>\n", o);
    }
    fputs("<p class=\"note\">", o);
    if (any_verdict(rs))
        fputs("<a href=\"#verdict\">Verdict</a> · ", o);
    fputs("<a href=\"#summary\">Summary</a> · <a href=\"#charts\">Over time</a> · "
          "<a href=\"#latency\">Latency</a> · <a href=\"#classes\">Errors by class</a> · <a href=\"#runs\">Runs</a> · "
          "<a href=\"#examples\">Examples</a> · <a href=\"#config\">Configuration</a></p>\n", o);

    write_verdicts(o, rs);
    fputs("<h2 id=\"summary\">Summary</h2>\n", o);
    struct cmp_table t;
    cmp_build(&t, rs, missing, nmissing);
    fputs("<div class=\"scroll\">", o);
    cmp_write(o, &t, CMP_HTML, CMP_MARK);
    fputs("</div>\n", o);
    cmp_free(&t);
    fputs("<p class=\"note\">One column per label; with repeats, the mean of the runs and in grey their range "
          "(min-max). Green: best of the row, red: worst, each only where its range over two or more repeats is clear "
          "of every other column's (one run cannot tell noise from a difference). \"-\": not measured in these runs. "
          "I/O is operations and bytes over the whole run.</p>\n", o);
    write_latency(o, rs);

    fputs("<h2 id=\"charts\">Over time</h2>\n<p class=\"note\">x: seconds since the start of each run. "
          "One line per run, in its label's colour (repeats share it). Dashed grey line: the senders stop "
          "(drain and sweep follow); dotted black line: the server crashed or restarted. Rates and I/O are per "
          "second over each interval. Runs of different kinds of server (run.server_kind) have charts of their "
          "own, each on its own scale.</p>\n<div class=\"grid\">\n", o);
    size_t nc, nfixed = sizeof fixed_charts / sizeof *fixed_charts, nempty = 0;
    struct chart *charts = chart_list(rs, &nc);
    size_t *all = xcalloc(rs->n, sizeof *all);
    for (size_t i = 0; i < rs->n; i++)
        all[i] = i;
    nempty = chart_lines_by_kind(o, rs, charts, nfixed);
    fputs("</div>\n", o);
    if (nc > nfixed) {
        /* A chart per command is long (a p99 line each): the table above has the
         * run's percentiles, these their course, for who wants it. */
        fputs("<details><summary>Latency of each command over time, p99</summary>\n<div class=\"grid\">\n", o);
        for (size_t c = nfixed; c < nc; c++)
            nempty += !chart_line(o, rs, &charts[c], all, rs->n, 0);
        fputs("</div></details>\n", o);
    }
    /* What no run measured goes last and small, so it does not push the rest down. */
    if (nempty) {
        fputs("<h3>Not recorded</h3>\n<p class=\"note\">No run has these series (a run without [server] "
              "settings has no server-side samples).</p>\n<div class=\"grid small\">\n", o);
        for (size_t c = 0; c < nc; c++)
            chart_line(o, rs, &charts[c], all, rs->n, 1);
        fputs("</div>\n", o);
    }
    free(all);
    free(charts);

    fputs("<h2 id=\"classes\">Errors and log hits by class</h2>\n<p class=\"note\">Bars: client errors per "
          "interval, stacked by class (a class has the same colour in every chart). Lanes under the axis: "
          "matching server log lines by class; a darker tick means more hits.</p>\n<div class=\"grid\">\n", o);
    struct classes all_err = { 0 };
    for (size_t g = 0; g < rs->ngroups; g++)
        collect_classes(&all_err, rs, rs->groups[g].runs, rs->groups[g].n, CLASS_ERRORS);
    for (size_t g = 0; g < rs->ngroups; g++)
        chart_classes(o, rs, g, &all_err, g + 1);
    classes_free(&all_err);
    fputs("</div>\n", o);

    write_runs(o, rs);
    write_events(o, rs);
    report_messages(o, rs);
    write_examples(o, rs);
    write_config(o, rs);
    fputs("</body>\n</html>\n", o);
    return ferror(o) ? -1 : 0;
}
