/* diagnose: one preflight check of one target, as the session (check.c) and its
 * diagnosis (diagnose.c) share it: what curl and the server said, and the line
 * that explains it. Internal to the preflight: other code uses preflight/check.h. */
#ifndef MS_PREFLIGHT_DIAGNOSE_H
#define MS_PREFLIGHT_DIAGNOSE_H

#include <curl/curl.h>

#include "lib/users.h"
#include "settings/config.h"

#define MAX_LINES 64
#define LINE_LEN 200
#define CONNECT_TIMEOUT_S 5

enum proto { P_SMTP, P_POP3, P_IMAP };
/* by enum proto: "smtp", "pop3", "imap" */
extern const char *const check_proto_names[];

/* One check of one target: a curl session against an SMTP, POP3 or IMAP target,
 * as a user or without AUTH, and what it saw. */
struct target_check {
    enum proto proto;
    const char *target;
    const struct user *user;         /* whose credentials; NULL = SMTP without AUTH */
    const char *rcpt;                /* SMTP: the recipient tried */
    const char *bind;                /* smtp.bind / pop3.bind: the source address, or NULL */
    CURL *h;
    struct curl_slist *rcpts;
    char url[400];
    char errbuf[CURL_ERROR_SIZE];
    /* The session as the server saw it: '<' its replies, '>' our command verbs
     * (never their arguments, which may hold credentials). */
    char lines[MAX_LINES][LINE_LEN];
    char dir[MAX_LINES];
    int nlines;
    char tls[40];                    /* "TLSv1.3" once negotiated */
    int done;
    int own_login;                   /* POP3 USER/PASS: curl connects, we log in */
    int step;                        /* of own_steps; -1 when finished */
    char obuf[600], ibuf[600];
    size_t olen, ooff, ilen;
    int own_secs;                    /* when our own exchange timed out: seconds taken */
    int not_proto;                   /* the first line was no greeting of the protocol (an SSH banner) */
    CURLcode rc;
    int ok;
    char result[700];
};

/* SMTP AUTH's mechanisms by smtp.auth's value (NULL: none, or curl's choice). */
extern const char *const check_smtp_mechs[];

/* The server's first reply of the transcript, or NULL. */
const char *check_first_reply(const struct target_check *p);
/* p->ok and p->result: what the check found, in one line. */
void diagnose_smtp(struct target_check *p, const struct config *cfg);
void diagnose_pop3(struct target_check *p, const struct config *cfg);
void diagnose_imap(struct target_check *p, const struct config *cfg);

#endif
