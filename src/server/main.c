/* mailsoak-server: entry point of the reference SMTP + POP3 + IMAP server. Reads the
 * settings, starts listening, announces READY on stdout (and --ready-file), runs
 * until SIGTERM or SIGINT, then removes its pid file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/atomicfile.h"
#include "lib/version.h"
#include "server/config.h"
#include "server/server.h"

/* temp + rename, so a reader never sees half a line. */
static int write_atomic(const char *path, const char *text)
{
    struct atomic_file a;
    char err[300];
    if (atomic_open(&a, path, err, sizeof err) < 0)
        return -1;
    return atomic_commit(&a, path, fputs(text, a.f) >= 0, err, sizeof err);
}

int main(int argc, char **argv)
{
    struct srv_config cfg;
    struct srv srv;
    char err[600], line[300];
    if (argc == 3 && !strcmp(argv[1], "--doc"))
        return srv_config_doc(argv[2]);
    if (argc == 2 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))) {
        printf("mailsoak-server %s\n", mailsoak_version);
        return 0;
    }
    int r = srv_config_from_args(&cfg, argc - 1, argv + 1);
    if (r) {
        srv_config_free(&cfg);
        return r == 1 ? 0 : r;
    }
    if (srv_log_open(cfg.log, "mailsoak-server") < 0) {
        fprintf(stderr, "mailsoak-server: server.log: %s: %s\n", cfg.log, strerror(errno));
        srv_config_free(&cfg);
        return 2;
    }
    if (srv_init(&srv, &cfg, err, sizeof err) < 0) {
        fprintf(stderr, "mailsoak-server: %s\n", err);
        srv_fini(&srv);
        srv_log_close();
        srv_config_free(&cfg);
        return 2;
    }
    snprintf(line, sizeof line, "%d\n", (int)getpid());
    if (cfg.pidfile && *cfg.pidfile && write_atomic(cfg.pidfile, line) < 0) {
        fprintf(stderr, "mailsoak-server: server.pidfile: %s: %s\n", cfg.pidfile, strerror(errno));
        srv_fini(&srv);
        srv_config_free(&cfg);
        return 2;
    }
    /* IMAP's addresses follow the pid, only when it listens, so readers of the
     * SMTP + POP3 line keep reading it as it was. */
    int ln = snprintf(line, sizeof line, "READY smtp=%s pop3=%s pid=%d", srv.addr[SRV_LSN_SMTP][0] ? srv.addr[SRV_LSN_SMTP] : "-",
                      srv.addr[SRV_LSN_POP3][0] ? srv.addr[SRV_LSN_POP3] : "-", (int)getpid());
    if (srv.addr[SRV_LSN_IMAP][0])
        ln += snprintf(line + ln, sizeof line - (size_t)ln, " imap=%s", srv.addr[SRV_LSN_IMAP]);
    if (srv.addr[SRV_LSN_IMAPS][0])
        ln += snprintf(line + ln, sizeof line - (size_t)ln, " imaps=%s", srv.addr[SRV_LSN_IMAPS]);
    snprintf(line + ln, sizeof line - (size_t)ln, "\n");
    srv_log("starting: store=%s store_dir=%s users=%zu faults=%zu seed=%llu; %.*s",
            srv_backend_by_kind(cfg.store)->name, cfg.store_dir, srv.users.n, cfg.faults.ncmd,
            (unsigned long long)cfg.seed, (int)strlen(line) - 1, line);
    if (cfg.ready_file && *cfg.ready_file && write_atomic(cfg.ready_file, line) < 0)
        fprintf(stderr, "mailsoak-server: server.ready_file: %s: %s\n", cfg.ready_file, strerror(errno));
    fputs(line, stdout);
    fflush(stdout);
    r = srv_run(&srv);
    srv_fini(&srv);
    if (cfg.pidfile && *cfg.pidfile)
        unlink(cfg.pidfile);
    /* How long the stop took by the server's own clock: what a test of a prompt
     * stop judges, not its own wall clock, which a loaded machine stretches. */
    uint64_t sig = __atomic_load_n(&srv.signal_ns, __ATOMIC_ACQUIRE);
    if (sig)
        srv_log("stopped %.3f s after the signal", (double)(mono_ns() - sig) / 1e9);
    else
        srv_log("stopped");
    srv_log_close();
    srv_config_free(&cfg);
    return r;
}
