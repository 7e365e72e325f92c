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

static void html_json(FILE *o, const json_t *v)
{
    if (json_is_string(v))
        html_puts(o, json_string_value(v));
    else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            if (i)
                fputs(", ", o);
            html_json(o, x);
        }
    } else if (json_is_integer(v)) {
        fprintf(o, "%lld", (long long)json_integer_value(v));   /* exact: a seed replays the run */
    } else if (json_is_real(v)) {
        html_real(o, json_real_value(v));
    } else if (v) {
        char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        html_puts(o, s);
        free(s);
    }
}

/* A table cell with a value from a file, "-" when it has none. */
static void td_value(FILE *o, const json_t *v, const char *cls)
{
    fprintf(o, *cls ? "<td class=\"%s\">" : "<td%s>", cls);
    if (v)
        html_json(o, v);
    else
        fputs("-", o);
    fputs("</td>", o);
}

/* Why unread mail is pending rather than lost: "queued 12, unswept 3" (the reasons
 * a run gave, those above zero), "-" for files without them. */
static void td_pending_reasons(FILE *o, const json_t *summary)
{
    static const char *const why[] = { "queued", "peeked", "unswept", "unsettled" };
    int any = 0, known = 0;
    fputs("<td class=\"l\">", o);
    for (size_t k = 0; k < sizeof why / sizeof *why; k++) {
        char key[32];
        snprintf(key, sizeof key, "pending_%s", why[k]);
        const json_t *v = json_object_get(summary, key);
        known |= v != NULL;
        if (!json_is_integer(v) || json_integer_value(v) <= 0)
            continue;
        fprintf(o, "%s%s %lld", any++ ? ", " : "", why[k], (long long)json_integer_value(v));
    }
    fputs(known ? "" : "-", o);
    fputs("</td>", o);
}

static int any_verdict(const struct result_set *rs)
{
    for (size_t i = 0; i < rs->n; i++)
        if (json_is_object(json_object_get(rs->v[i].root, "verdict")))
            return 1;
    return 0;
}

/* Each run's verdict (result JSON "verdict"): its headline, the remedy, the gates
 * that failed with their measured values. Runs of files without one are skipped. */
static void write_verdicts(FILE *o, const struct result_set *rs)
{
    int any = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const json_t *v = json_object_get(rs->v[i].root, "verdict");
        const char *state = json_string_value(json_object_get(v, "state"));
        const char *head = json_string_value(json_object_get(v, "headline"));
        if (!state || !head)
            continue;
        if (!any++)
            fputs("<h2 id=\"verdict\">Verdict</h2>\n", o);
        fprintf(o, "<p class=\"%s\"><b>", strcmp(state, "proven") ? "warn" : "note");
        html_puts(o, rs->v[i].label);
        fputs("</b>: ", o);
        html_puts(o, head);
        fputs("</p>\n", o);
        const char *sessions = json_string_value(json_object_get(v, "session_errors"));
        if (sessions) {
            fputs("<p class=\"warn\">Sessions: ", o);
            html_puts(o, sessions);
            fputs("</p>\n", o);
        }
        const char *remedy = json_string_value(json_object_get(v, "remedy"));
        if (remedy) {
            fputs("<p class=\"note\">What to change: ", o);
            html_puts(o, remedy);
            fputs("</p>\n", o);
        }
        const json_t *results = json_object_get(json_object_get(v, "gates"), "results"), *g;
        size_t k;
        int failed = 0;
        json_array_foreach(results, k, g) {
            if (json_is_true(json_object_get(g, "pass")))
                continue;
            fputs(failed++ ? "<li>" : "<p class=\"warn\">Failed gates:</p>\n<ul><li>", o);
            html_puts(o, json_string_value(json_object_get(g, "text")) ? json_string_value(json_object_get(g, "text")) : "");
            fputs("</li>", o);
        }
        if (failed)
            fprintf(o, "</ul>\n<p class=\"note\">Exit status %lld.</p>\n",
                    (long long)json_integer_value(json_object_get(json_object_get(v, "gates"), "exit_status")));
    }
}

static void write_runs(FILE *o, const struct result_set *rs)
{
    static const char *const keys[] = { "run_id", "seed", "start_time", "duration_s", "elapsed_s", "interrupted", "version" };
    static const char *const sums[] = { "delivered", "lost", "pending", "foreign", "server_crashes" };
    fputs("<h2 id=\"runs\">Runs</h2>\n<div class=\"scroll\"><table>\n<thead><tr><th>run</th><th>file</th>", o);
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        fprintf(o, "<th>%s</th>", keys[k]);
    for (size_t k = 0; k < sizeof sums / sizeof *sums; k++) {
        fprintf(o, "<th>%s</th>", sums[k]);
        if (!strcmp(sums[k], "pending"))
            fputs("<th>pending because</th>", o);
    }
    fputs("</tr></thead>\n<tbody>\n", o);
    for (size_t i = 0; i < rs->n; i++) {
        char name[300];
        run_name(name, sizeof name, rs, i);
        fputs("<tr><td class=\"l\">", o);
        html_puts(o, name);
        fputs("</td><td class=\"l\"><code>", o);
        html_puts(o, rs->v[i].path);
        fputs("</code></td>", o);
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
            td_value(o, json_object_get(rs->v[i].root, keys[k]), "");
        for (size_t k = 0; k < sizeof sums / sizeof *sums; k++) {
            td_value(o, json_object_get(rs->v[i].summary, sums[k]), "");
            if (!strcmp(sums[k], "pending"))
                td_pending_reasons(o, rs->v[i].summary);
        }
        fputs("</tr>\n", o);
    }
    fputs("</tbody></table></div>\n", o);
}

/* A log class with lines in it: the others are noise under "Examples". */
static int log_class_hit(const json_t *v)
{
    const json_t *c = json_object_get(v, "count");
    return json_is_integer(c) && json_integer_value(c) > 0;
}

/* One row of the examples table: kind, class, the count of the class, the example. */
static void example_row(FILE *o, const char *kind, const char *cls, const json_t *count)
{
    fprintf(o, "<tr class=\"%s\"><td class=\"l\">%s</td><td class=\"l\">", kind, kind);
    html_puts(o, cls);
    fputs("</td><td>", o);
    html_json(o, count);
    fputs("</td><td class=\"wrap\">", o);
}

/* The proof behind the ledger's red cells: each lost example (our id, the
 * Message-ID a server logs, its queue id, the mailbox, when it was accepted and when
 * its mailbox was last read in full) and each corruption example (what differed). */
static void ledger_examples(FILE *o, const json_t *summary)
{
    size_t j;
    json_t *e;
    json_array_foreach(json_object_get(summary, "lost_examples"), j, e) {
        example_row(o, "lost", "lost", json_object_get(summary, "lost"));
        fputs("<code>", o);
        html_json(o, json_object_get(e, "id"));
        fputs("</code> <code>", o);
        html_json(o, json_object_get(e, "message_id"));
        fputs("</code>", o);
        const json_t *q = json_object_get(e, "queue_id");
        if (json_is_string(q) && *json_string_value(q)) {
            fputs(" queued as <code>", o);
            html_json(o, q);
            fputs("</code>", o);
        }
        fputs(" to <code>", o);
        html_json(o, json_object_get(e, "mailbox"));
        fputs("</code>, accepted ", o);
        html_json(o, json_object_get(e, "accepted"));
        fputs(", mailbox last read in full ", o);
        html_json(o, json_object_get(e, "mailbox_read"));
        fputs("</td></tr>\n", o);
    }
    json_array_foreach(json_object_get(summary, "corruption_examples"), j, e) {
        example_row(o, "corrupted", "corrupted", json_object_get(summary, "corrupted"));
        fputs("<code>", o);
        html_json(o, e);
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
        const json_t *s = rs->v[i].summary;
        const json_t *ex = json_object_get(s, "error_examples");
        const json_t *lc = json_object_get(s, "log_classes");
        size_t proofs = json_array_size(json_object_get(s, "lost_examples")) +
                        json_array_size(json_object_get(s, "corruption_examples"));
        size_t hits = 0;
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)lc, k, v)
            hits += log_class_hit(v);
        if (!json_object_size(ex) && !hits && !proofs)
            continue;
        char name[300];
        run_name(name, sizeof name, rs, i);
        fprintf(o, "<details%s><summary>", proofs ? " open" : "");
        html_puts(o, name);
        fputs("</summary>\n<table><thead><tr><th>kind</th><th>class</th><th>count</th><th class=\"l\">example</th>"
              "</tr></thead><tbody>\n", o);
        ledger_examples(o, s);
        json_object_foreach((json_t *)ex, k, v) {
            size_t j;
            json_t *line;
            json_array_foreach(v, j, line) {
                example_row(o, "error", k, json_object_get(json_object_get(s, "errors_by_class"), k));
                fputs("<code>", o);
                html_json(o, line);
                fputs("</code></td></tr>\n", o);
            }
        }
        json_object_foreach((json_t *)lc, k, v) {
            size_t j;
            json_t *e;
            json_t *exs = json_object_get(v, "examples");
            if (!log_class_hit(v))
                continue;
            if (!json_array_size(exs)) {
                example_row(o, "log", k, json_object_get(v, "count"));
                fputs("</td></tr>\n", o);
            }
            json_array_foreach(exs, j, e) {
                double t;
                example_row(o, "log", k, json_object_get(v, "count"));
                if (json_path_number(e, "t", &t) == 0) {
                    fputs("at ", o);
                    html_real(o, t);
                    fputs(" s: ", o);
                }
                fputs("<code>", o);
                html_json(o, json_object_get(e, "line"));
                fputs("</code></td></tr>\n", o);
            }
        }
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
        size_t j;
        json_t *e;
        char name[300];
        run_name(name, sizeof name, rs, i);
        json_array_foreach(rs->v[i].events, j, e) {
            if (!any)
                fputs("<h2 id=\"events\">Server events</h2>\n<table><thead><tr><th>run</th><th>t (s)</th>"
                      "<th class=\"l\">kind</th><th class=\"l\">text</th></tr></thead><tbody>\n", o);
            any = 1;
            fputs("<tr><td class=\"l\">", o);
            html_puts(o, name);
            fputs("</td><td>", o);
            html_json(o, json_object_get(e, "t"));
            fputs("</td><td class=\"l\">", o);
            html_json(o, json_object_get(e, "kind"));
            fputs("</td><td class=\"wrap\">", o);
            html_json(o, json_object_get(e, "text"));
            fputs("</td></tr>\n", o);
        }
    }
    if (any)
        fputs("</tbody></table>\n", o);
}

/* The value of config[section][key] in run i, or NULL. */
static const json_t *config_value(const struct result *r, const char *section, const char *key)
{
    return json_object_get(json_object_get(r->config, section), key);
}

static void write_config(FILE *o, const struct result_set *rs)
{
    char name[300];
    fputs("<h2 id=\"config\">Effective configuration</h2>\n", o);
    /* First the settings that differ between runs (what makes the columns differ),
     * then each run's full configuration. */
    int header = 0;
    json_t *seen = json_object();
    for (size_t i = 0; i < rs->n; i++) {
        const char *sec, *key;
        json_t *s, *v;
        json_object_foreach(rs->v[i].config, sec, s) {
            json_object_foreach(s, key, v) {
                char id[600];
                snprintf(id, sizeof id, "%s.%s", sec, key);
                if (json_object_get(seen, id))
                    continue;
                json_object_set_new(seen, id, json_true());
                int same = 1;
                for (size_t j = 1; j < rs->n && same; j++)
                    same = json_equal(config_value(&rs->v[0], sec, key), config_value(&rs->v[j], sec, key)) ||
                           (!config_value(&rs->v[0], sec, key) && !config_value(&rs->v[j], sec, key));
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
                for (size_t j = 0; j < rs->n; j++) {
                    td_value(o, config_value(&rs->v[j], sec, key), "l");
                }
                fputs("</tr>\n", o);
            }
        }
    }
    json_decref(seen);
    if (header)
        fputs("</tbody></table></div>\n", o);
    else if (rs->n > 1)
        fputs("<p class=\"note\">All runs have the same configuration.</p>\n", o);
    for (size_t i = 0; i < rs->n; i++) {
        run_name(name, sizeof name, rs, i);
        fprintf(o, "<details%s><summary>", i == 0 ? " open" : "");
        html_puts(o, name);
        fputs(": <code>", o);
        html_puts(o, rs->v[i].path);
        fputs("</code></summary>\n", o);
        if (!json_object_size(rs->v[i].config)) {
            fputs("<p class=\"note\">This file has no configuration.</p></details>\n", o);
            continue;
        }
        fputs("<table><tbody>\n", o);
        const char *sec, *key;
        json_t *s, *v;
        json_object_foreach(rs->v[i].config, sec, s) {
            fputs("<tr><th colspan=\"2\">[", o);
            html_puts(o, sec);
            fputs("]</th></tr>\n", o);
            if (!json_is_object(s)) {
                fputs("<tr><td></td><td class=\"wrap\">", o);
                html_json(o, s);
                fputs("</td></tr>\n", o);
                continue;
            }
            json_object_foreach(s, key, v) {
                fputs("<tr><td class=\"l\">", o);
                html_puts(o, key);
                fputs("</td><td class=\"wrap\"><code>", o);
                html_json(o, v);
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
    json_t *names = json_array(), *seen = json_object();
    for (size_t i = 0; i < rs->n; i++) {
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(rs->v[i].summary, "latency"), k, v)
            if (json_is_object(v) && !json_object_get(seen, k)) {
                json_object_set_new(seen, k, json_true());
                json_array_append_new(names, json_string(k));
            }
    }
    json_decref(seen);
    fputs("<h2 id=\"latency\">Latency</h2>\n", o);
    if (!json_array_size(names)) {
        fputs("<p class=\"note\">No run recorded latencies.</p>\n", o);
        json_decref(names);
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
    size_t n;
    json_t *name;
    json_array_foreach(names, n, name) {
        fputs("<tr><th>", o);
        html_json(o, name);
        fputs("</th>", o);
        for (size_t i = 0; i < rs->n; i++) {
            const json_t *l = json_object_get(json_object_get(rs->v[i].summary, "latency"), json_string_value(name));
            for (size_t p = 0; p < sizeof pct / sizeof *pct; p++) {
                /* two decimals, as the run's own latency table prints them */
                const json_t *x = json_object_get(l, pct[p]);
                if (json_is_number(x))
                    fprintf(o, "<td>%.2f</td>", json_number_value(x));
                else
                    fputs("<td>-</td>", o);
            }
        }
        fputs("</tr>\n", o);
    }
    fputs("</tbody></table></div>\n", o);
    json_decref(names);
}

static const struct chart fixed_charts[] = {
    { "rate_in", "Messages sent per second", "messages/s", "rate_in", CU_RATE, 0, 0 },
    { "rate_out", "Messages read per second", "messages/s", "rate_out", CU_RATE, 0, 0 },
    { "spool", "Spool: messages queued at the server", "messages", "server/spool", CU_COUNT, 0, 0 },
    { "store_messages", "Store: messages in the mailboxes", "messages", "server/store_messages", CU_COUNT, 0, 0 },
    { "store_bytes", "Store: size of the mailboxes", "bytes", "server/store_bytes", CU_BYTES, 0, 0 },
    { "mem", "Server memory (whole process set)", "bytes", "server/mem", CU_BYTES, 0, 0 },
    { "input", "Server I/O: read operations per second", "ops/s", "server/input", CU_RATE, 1, 0 },
    { "output", "Server I/O: write operations per second", "ops/s", "server/output", CU_RATE, 1, 0 },
    { "ibytes", "Server I/O: bytes read per second", "bytes/s", "server/ibytes", CU_BYTES, 1, 0 },
    { "obytes", "Server I/O: bytes written per second", "bytes/s", "server/obytes", CU_BYTES, 1, 0 },
    { "procs", "Server processes", "processes", "server/procs", CU_COUNT, 0, 0 },
    { "conns", "Client connections open", "connections", "conns", CU_COUNT, 0, 0 },
    { "errors", "Errors per second (all classes)", "errors/s", "errors", CU_RATE, 1, 0 },
    { "log_hits", "Server log hits per second (all classes)", "hits/s", "server/log_hits", CU_RATE, 1, 1 },
    { "delivery_p50", "Delivery latency p50 (sent to read)", "ms", "latency/delivery/p50", CU_MS, 0, 0 },
    { "delivery_p99", "Delivery latency p99 (sent to read)", "ms", "latency/delivery/p99", CU_MS, 0, 0 },
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
    collect_classes(&cmds, rs, all, rs->n, "latency");
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
        snprintf(x->path, sizeof x->path, "latency/%s/p99", cmds.v[i]);
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
    const json_t *ver = json_object_get(rs->v[0].root, "version");
    if (json_is_string(ver)) {
        fputs(", written by mailsoak ", o);
        html_puts(o, json_string_value(ver));
    }
    fputs(". Workload:", o);
    const char *k;
    json_t *v;
    if (!json_object_size(rs->v[0].workload))
        fputs(" not recorded", o);
    json_object_foreach(rs->v[0].workload, k, v) {
        fputs(" <code>", o);
        html_puts(o, k);
        fputc('=', o);
        html_json(o, v);
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
        collect_classes(&all_err, rs, rs->groups[g].runs, rs->groups[g].n, "errors_by_class");
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
