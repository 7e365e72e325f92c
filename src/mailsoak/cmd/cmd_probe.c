/* cmd_probe: `mailsoak probe`: reads the settings (its usage lists only the keys the
 * probe reads) and hands them to probe/serve.c, which samples and serves. */
#include "cmd/cmd_probe.h"

#include <stdio.h>
#include <string.h>

#include "lib/cli.h"
#include "probe/serve.h"
#include "settings/config.h"

static void usage(FILE *f)
{
    fputs("usage: mailsoak probe [-c FILE]... [--listen ADDR:PORT] [--token TOKEN] [--set server.KEY=VALUE]...\n"
          "\n"
          "Samples the server on this host (the [server] keys, as mailsoak run reads them) and\n"
          "serves the samples until SIGINT or SIGTERM: /metrics in the Prometheus text format,\n"
          "/samples for mailsoak run on another host (server.probe = http://THIS-HOST:PORT).\n"
          "Other sections of the file are read and ignored, so one file serves both sides.\n", f);
    /* only the keys the probe reads */
    const struct opt *mine[64];
    size_t n = 0;
    for (const struct opt *o = config_opts; o->key && n < sizeof mine / sizeof mine[0] - 1; o++)
        if ((!strcmp(o->section, "server") && strncmp(o->key, "probe", 5)) || !strcmp(o->section, "probe"))
            mine[n++] = o;
    struct opt table[64];
    for (size_t i = 0; i < n; i++)
        table[i] = *mine[i];
    memset(&table[n], 0, sizeof table[n]);
    opts_help(f, table);
}

int cmd_probe(int argc, char **argv)
{
    struct config cfg = { 0 };
    const struct cli_cmd cmd = { .name = "mailsoak probe", .usage = usage, .words = CLI_SETTINGS,
                                 .settings = config_from_words, .ud = &cfg };
    int rc;
    if (cli_parse(&cmd, argc, argv, stdout, stderr, NULL, NULL, &rc))
        rc = probe_serve(&cfg);
    config_free(&cfg);
    return rc;
}
