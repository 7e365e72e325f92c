/* cmd_check: `mailsoak check`: the preflight alone (preflight/check.c, libcurl's look
 * at every target), with run's settings and the number of reader logins to try. */
#include "cmd/cmd_check.h"

#include <curl/curl.h>
#include <stdio.h>

#include "lib/cli.h"
#include "lib/exitcodes.h"
#include "preflight/check.h"
#include "settings/config.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: mailsoak check [--sample N] [the options of mailsoak run]\n"
               "\n"
               "Checks, before any load, that each SMTP target greets, answers EHLO, does TLS\n"
               "and AUTH as configured and accepts MAIL FROM and RCPT TO (the session ends\n"
               "after DATA's 354, so nothing is delivered), and that a sample of users can\n"
               "log in to each POP3 target (each IMAP target, and EXAMINE INBOX, with\n"
               "readers.protocol = imap). Uses libcurl, independently of mailsoak's engine.\n"
               "One line per check; exit 0 when all pass, 3 when any fails, 2 on bad options.\n"
               "\n"
               "  --sample N   users to log in per POP3 or IMAP target: first, middle, last... [%d]\n"
               "\n"
               "Every other option is mailsoak run's (see mailsoak run --help).\n",
            CHECK_SAMPLE_DEFAULT);
}

int cmd_check(int argc, char **argv)
{
    unsigned long sample = CHECK_SAMPLE_DEFAULT;
    struct config cfg = { 0 };
    const struct cli_opt opts[] = {
        { .name = "--sample", .value = "a number of users", .num = &sample, .min = 1, .max = 1000 },
        { 0 },
    };
    const struct cli_cmd cmd = { .name = "mailsoak check", .usage = usage, .opts = opts, .words = CLI_SETTINGS,
                                 .settings = config_from_words, .ud = &cfg };
    int rc;
    char err[600];
    int parsed = cli_parse(&cmd, argc, argv, stdout, stderr, NULL, NULL, &rc);
    if (parsed && config_check_limits(&cfg, err, sizeof err) < 0) {
        fprintf(stderr, "mailsoak check: %s\n", err);   /* as run says it, with the same status */
        rc = MS_EXIT_SETUP;
    } else if (parsed) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        rc = check_config(&cfg, (unsigned)sample, stdout, NULL);
        curl_global_cleanup();
    }
    config_free(&cfg);
    return rc;
}
