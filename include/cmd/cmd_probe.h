/* cmd_probe: `mailsoak probe [-c FILE]... [--listen ADDR:PORT] [--token TOKEN]
 * [--set server.KEY=VALUE]...`: the server measured on its own host, its samples
 * served over HTTP (cmd/cmd_probe.c, over probe/serve.c). */
#ifndef MS_CMD_PROBE_H
#define MS_CMD_PROBE_H

/* argv[0] is "probe". 0 stopped by SIGINT or SIGTERM, 2 bad configuration. */
int cmd_probe(int argc, char **argv);

#endif
