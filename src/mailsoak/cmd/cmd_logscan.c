/* cmd_logscan: `mailsoak logscan`, the run's log watcher over logs that already exist,
 * from their first line: how many lines each class counts, with the first lines of
 * each, or every matching line (--lines) to grep, so a user can tune log_class
 * against a server's real logs before a ten-minute soak. The classes and files are
 * the run's: [server] log_class, log_defaults and log from -c/--set, or FILEs. */
#include "cmd/cmd_logscan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/cli.h"
#include "lib/printable.h"
#include "probe/logwatch.h"
#include "settings/config.h"

enum { LINE_SHOWN = 400 };      /* of a line, what is printed */

static void usage(FILE *f)
{
    fputs("usage: mailsoak logscan [-c FILE]... [--set server.KEY=VALUE]... [--class 'NAME: ERE']...\n"
          "                        [--no-defaults] [--examples N] [--lines] [LOG...]\n"
          "\n"
          "Runs the log watcher of mailsoak run over existing logs, each from its first line,\n"
          "and prints how many lines each class counts, with the first lines of each: tune\n"
          "log_class against a server's real logs before a soak. The classes are the built-in\n"
          "ones and [server] log_class of the -c files and --set; without LOG arguments the\n"
          "[server] log files are read.\n"
          "\n"
          "  -c FILE          a mailsoak.conf (repeatable; its [server] section is used)\n"
          "  --set K=V        a setting, as for run (server.log_class=..., server.log_defaults=no)\n"
          "  --class 'N: RE'  add or replace class N (N/i: ignores case; 'N:' removes it)\n"
          "  --no-defaults    without the built-in classes\n"
          "  --examples N     lines printed per class (default 3; 0: none)\n"
          "  --lines          print every line that matches a class, as FILE:LINE: CLASSES: TEXT\n"
          "\n"
          "exit status: 0 done, 2 bad arguments or a log that cannot be read.\n", f);
}

struct example {
    const char *file;
    uint64_t lineno;
    char *text;
};

struct scan {
    struct logwatch *lw;
    size_t ncls;
    uint64_t *delta;            /* per class, the line just counted */
    struct example *ex;         /* ncls x examples */
    size_t *nex, examples;
    int print_lines;
    const char *file;
    uint64_t lines, matched;
    FILE *out;
};

static char *shown(const char *line, char *buf, size_t len)
{
    size_t n = strlen(line);
    printable(buf, len, line, utf8_cut(line, n, LINE_SHOWN));
    if (n > LINE_SHOWN)
        snprintf(buf + strlen(buf), len - strlen(buf), "...");
    return buf;
}

static void on_line(void *ctx, uint64_t lineno, const char *line)
{
    struct scan *s = ctx;
    char buf[4 * LINE_SHOWN + 8];
    s->lines++;
    if (!logwatch_take(s->lw, s->delta))
        return;
    s->matched++;
    if (s->print_lines)
        fprintf(s->out, "%s:%llu: ", s->file, (unsigned long long)lineno);
    int first = 1;
    for (size_t i = 0; i < s->ncls; i++) {
        if (!s->delta[i])
            continue;
        if (s->print_lines) {
            fprintf(s->out, "%s%s", first ? "" : ",", logwatch_class_name(s->lw, i));
            first = 0;
        }
        if (s->nex[i] < s->examples) {
            struct example *e = &s->ex[i * s->examples + s->nex[i]++];
            e->file = s->file;
            e->lineno = lineno;
            e->text = xstrdup(shown(line, buf, sizeof buf));
        }
    }
    if (s->print_lines)
        fprintf(s->out, ": %s\n", shown(line, buf, sizeof buf));
}

static void report(struct scan *s)
{
    size_t w = 5;
    for (size_t i = 0; i < s->ncls; i++)
        if (strlen(logwatch_class_name(s->lw, i)) > w)
            w = strlen(logwatch_class_name(s->lw, i));
    fprintf(s->out, "%-*s  %10s\n", (int)w, "class", "lines");
    for (size_t i = 0; i < s->ncls; i++)
        fprintf(s->out, "%-*s  %10llu\n", (int)w, logwatch_class_name(s->lw, i),
                (unsigned long long)logwatch_count(s->lw, i));
    fprintf(s->out, "%llu of %llu lines matched a class\n", (unsigned long long)s->matched,
            (unsigned long long)s->lines);
    for (size_t i = 0; i < s->ncls; i++) {
        if (!s->nex[i])
            continue;
        fprintf(s->out, "\n%s:\n", logwatch_class_name(s->lw, i));
        for (size_t k = 0; k < s->nex[i]; k++) {
            const struct example *e = &s->ex[i * s->examples + k];
            fprintf(s->out, "  %s:%llu: %s\n", e->file, (unsigned long long)e->lineno, e->text);
        }
    }
}

int cmd_logscan(int argc, char **argv)
{
    char err[600], **args;
    int no_defaults = 0, lines = 0;
    unsigned long examples = 3;
    size_t nargs;
    struct strlist classes = { 0 };
    struct config cfg = { 0 };
    const struct cli_opt opts[] = {
        { .name = "-c", .value = "a file", .settings = 1 },
        { .name = "--set", .value = "a setting", .settings = 1 },
        { .name = "--class", .value = "a class", .list = &classes },
        { .name = "--no-defaults", .flag = &no_defaults },
        { .name = "--lines", .flag = &lines },
        { .name = "--examples", .value = "a number", .num = &examples, .min = 0, .max = 1000 },
        { 0 },
    };
    const struct cli_cmd cmd = { .name = "mailsoak logscan", .usage = usage, .opts = opts,
                                 .words = CLI_FILES_ANY, .settings = config_from_words, .ud = &cfg };
    int rc;
    int have_cfg = cli_parse(&cmd, argc, argv, stdout, stderr, &args, &nargs, &rc);
    struct strlist files = { .v = args, .n = nargs };
    struct logwatch *lw = NULL;
    if (have_cfg) {
        struct tested_server sc = cfg.server;
        sc.logs = (struct strlist){ 0 };    /* files are read from their start below */
        sc.log_defaults = sc.log_defaults && !no_defaults;
        lw = logwatch_from_config(&sc, 0, err, sizeof err);
        for (size_t i = 0; lw && i < classes.n; i++)
            if (logwatch_set_class(lw, classes.v[i], err, sizeof err) < 0) {
                fprintf(stderr, "mailsoak logscan: --class '%s': %s\n", classes.v[i], err);
                rc = 2;
            }
        if (!lw) {
            fprintf(stderr, "mailsoak logscan: %s\n", err);
            rc = 2;
        }
        if (rc == 0 && !files.n && !cfg.server.logs.n) {
            fprintf(stderr, "mailsoak logscan: no log to read: give LOG files, or a -c file with [server] log\n");
            rc = 2;
        }
    }
    if (rc == 0 && lw) {
        const struct strlist *paths = files.n ? &files : &cfg.server.logs;
        struct scan s = { .lw = lw, .ncls = logwatch_nclasses(lw), .examples = examples, .print_lines = lines,
                          .out = stdout };
        s.delta = xcalloc(s.ncls, sizeof *s.delta);
        s.ex = xcalloc(s.ncls * (examples ? examples : 1), sizeof *s.ex);
        s.nex = xcalloc(s.ncls, sizeof *s.nex);
        for (size_t i = 0; i < paths->n && rc == 0; i++) {
            s.file = paths->v[i];
            if (logwatch_scan_file(lw, paths->v[i], 0, on_line, &s, err, sizeof err) < 0) {
                fprintf(stderr, "mailsoak logscan: %s\n", err);
                rc = 2;
            }
        }
        if (rc == 0) {
            if (lines)
                fputc('\n', stdout);
            report(&s);
        }
        for (size_t i = 0; i < s.ncls * (examples ? examples : 1); i++)
            free(s.ex[i].text);
        free(s.ex);
        free(s.nex);
        free(s.delta);
    }
    logwatch_free(lw);
    config_free(&cfg);
    strlist_free(&classes);
    free(args);
    return rc;
}
