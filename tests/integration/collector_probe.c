/* collector_probe: the collector alone, for t_collector.sh while `mailsoak run` does
 * not start it yet. Reads the [server] settings like `mailsoak run` does, samples
 * until a line arrives on stdin (or stdin closes), then writes what the run's JSON
 * would carry: summary keys, one timeline entry for the whole run, the events and
 * the table rows.
 * Usage: collector_probe OUT.json [mailsoak run options: -c FILE, --set server.K=V] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "probe/collector.h"
#include "settings/config.h"
#include "result/probe_output.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: collector_probe OUT.json [-c FILE] [--set server.KEY=VALUE]...\n");
        return 2;
    }
    struct config cfg;
    if (config_from_args(&cfg, argc - 2, argv + 2) != 0)
        return 2;
    char err[600];
    uint64_t t0 = mono_ns();
    struct collector *c = collector_start(&cfg.server, t0, err, sizeof err);
    if (!c) {
        fprintf(stderr, "collector_probe: %s\n", err);
        config_free(&cfg);
        return 2;
    }
    printf("ready\n");
    fflush(stdout);
    char line[64];
    (void)fgets(line, sizeof line, stdin);
    collector_stop(c);

    json_t *root = json_object(), *summary = json_object(), *events = json_array(), *rows = json_array();
    json_t *entry = json_object(), *timeline = json_array();
    struct probe_summary ps;
    struct probe_interval iv;
    struct probe_events pe;
    collector_summary(c, &ps);
    collector_interval(c, t0, mono_ns(), &iv);
    collector_events(c, &pe);
    probe_json_summary(&ps, summary);
    probe_json_interval(&iv, entry);
    json_array_append_new(timeline, entry);
    probe_json_events(&pe, events);
    char name[64], value[64];
    for (int i = 0, rc; (rc = probe_table_row(&ps, i, name, sizeof name, value, sizeof value)); i++)
        if (rc > 0)
            json_array_append_new(rows, json_pack("[s, s]", name, value));
    probe_summary_free(&ps);
    probe_interval_free(&iv);
    probe_events_free(&pe);
    json_object_set_new(root, "summary", summary);
    json_object_set_new(root, "timeline", timeline);
    json_object_set_new(root, "events", events);
    json_object_set_new(root, "table", rows);
    int rc = json_dump_file(root, argv[1], JSON_INDENT(1)) == 0 ? 0 : 1;
    json_decref(root);
    collector_free(c);
    config_free(&cfg);
    return rc;
}
