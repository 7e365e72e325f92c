/* report_messages: the report's messages section: those not delivered exactly once
 * that each run showed one by one, with the server's evidence, the pending said, and
 * the late ones (delivered intact) apart, a line each. */
#include "analyse/report_messages.h"

#include <stdio.h>

#include "analyse/timeline.h"
#include "lib/escape.h"

/* A value of a result file as text: a string escaped, a number as it is. */
static void put_json(FILE *o, const json_t *v)
{
    if (json_is_string(v))
        html_puts(o, json_string_value(v));
    else if (json_is_integer(v))
        fprintf(o, "%lld", (long long)json_integer_value(v));
}

/* The late messages each run showed: delivered intact, first read by the sweep, a
 * line each, apart from the failures (their trails are in the result file). */
static void write_late(FILE *o, const struct result_set *rs)
{
    int any = 0;
    for (size_t i = 0; i < rs->n; i++) {
        size_t j;
        json_t *m;
        char name[300];
        json_array_foreach(json_object_get(rs->v[i].summary, "late_examples"), j, m) {
            if (!any)
                fputs("<h2 id=\"late\">Late messages: delivered intact, first read by the sweep</h2>\n"
                      "<table><thead><tr><th>run</th><th class=\"l\">message</th><th class=\"l\">queue id</th>"
                      "</tr></thead><tbody>\n", o);
            any = 1;
            run_name(name, sizeof name, rs, i);
            fputs("<tr class=\"late\"><td class=\"l\">", o);
            html_puts(o, name);
            fputs("</td><td class=\"l\"><code>", o);
            put_json(o, json_object_get(m, "message_id"));
            fputs("</code> ", o);
            put_json(o, json_object_get(m, "mailbox"));
            fputs("</td><td class=\"l\"><code>", o);
            put_json(o, json_object_get(m, "queue_id"));
            fputs("</code></td></tr>\n", o);
        }
    }
    if (any)
        fputs("</tbody></table>\n", o);
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
            char key[32], name[300];
            snprintf(key, sizeof key, "%s_examples", kinds[k]);
            const json_t *ex = json_object_get(rs->v[i].summary, key);
            size_t j;
            json_t *m;
            json_array_foreach((json_t *)ex, j, m) {
                if (!any)
                    fputs("<h2 id=\"messages\">Messages not delivered exactly once, with the server's evidence</h2>\n"
                          "<table><thead><tr><th>run</th><th class=\"l\">outcome</th><th class=\"l\">message</th>"
                          "<th class=\"l\">queue id</th><th class=\"l\">cause</th><th class=\"l\">trail in the "
                          "server's logs</th></tr></thead><tbody>\n", o);
                any = 1;
                run_name(name, sizeof name, rs, i);
                const json_t *ev = json_object_get(m, "server_evidence");
                fputs("<tr><td class=\"l\">", o);
                html_puts(o, name);
                fputs("</td><td class=\"l\">", o);
                html_puts(o, kinds[k]);
                fputs("</td><td class=\"l\"><code>", o);
                put_json(o, json_object_get(m, "message_id"));
                fputs("</code><br>", o);
                put_json(o, json_object_get(m, "mailbox"));
                fputs("</td><td class=\"l\"><code>", o);
                put_json(o, json_object_get(m, "queue_id"));
                fputs("</code></td><td class=\"wrap\">", o);
                if (json_is_object(ev)) {
                    put_json(o, json_object_get(ev, "cause"));
                    if (json_is_string(json_object_get(ev, "cause_line"))) {
                        fputs("<br><code>", o);
                        put_json(o, json_object_get(ev, "cause_line"));
                        fputs("</code>", o);
                    }
                    fputs("</td><td class=\"wrap\"><details><summary>", o);
                    put_json(o, json_object_get(ev, "lines"));
                    fputs(" lines</summary><pre>", o);
                    size_t l;
                    json_t *line;
                    json_array_foreach(json_object_get(ev, "trail"), l, line) {
                        put_json(o, line);
                        fputc('\n', o);
                    }
                    fputs("</pre></details>", o);
                } else {
                    fputs("</td><td class=\"wrap\">no server log was read", o);
                }
                fputs("</td></tr>\n", o);
            }
        }
    if (any)
        fputs("</tbody></table>\n", o);
    for (size_t i = 0; i < rs->n; i++) {
        json_int_t pending = json_integer_value(json_object_get(rs->v[i].summary, "pending"));
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
                   "runs table's <i>pending because</i>).</p>\n", (long long)pending, pending == 1 ? "" : "s");
    }
}

void report_messages(FILE *o, const struct result_set *rs)
{
    write_messages(o, rs);
    write_late(o, rs);
}
