/* check: the preflight (`mailsoak check`, and `mailsoak run` before any load). With
 * libcurl, an implementation independent of our engine, it asks each target what a
 * run would need (greeting, EHLO, TLS, AUTH, MAIL and RCPT; POP3 logins of a sample
 * of users) and names each problem in one line. */
#ifndef MS_CHECK_H
#define MS_CHECK_H

#include <signal.h>
#include <stdio.h>

#include "settings/config.h"

#define CHECK_SAMPLE_DEFAULT 3

/* Runs every check at once (each bounded: 5 s to connect, 15 s in all) and prints one
 * line per check to out: "OK ..." or the problem in plain words. 0 when all passed,
 * 3 when any problem, 2 when the configuration cannot be checked (reason on stderr).
 * sample: POP3 users to log in per target, spread over the list (first, middle, last).
 * stop (may be NULL): when it becomes non-zero (a signal), the checks are abandoned
 * within a second and nothing is printed; the return value is then meaningless. */
int check_config(const struct config *cfg, unsigned sample, FILE *out, volatile sig_atomic_t *stop);

#endif
