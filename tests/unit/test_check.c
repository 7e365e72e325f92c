/* test_check: `mailsoak check`'s own logic without the testbed: option handling, and the
 * explanations for server behaviour the testbed cannot show (a refusing greeting, a locked
 * mailbox, an AUTH mechanism not offered), from scripted servers on 127.0.0.1. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "cmd/cmd_check.h"
#include "preflight/check.h"
#include "settings/config.h"

/* A server that greets, then answers each command by the first rule whose prefix
 * matches, for one connection. */
struct rule {
    const char *prefix, *reply;
};

struct fake {
    int lfd, port;
    const char *greeting;
    const struct rule *rules;
    pthread_t th;
    char peer[64];                   /* the client's address, as the server saw it */
};

static void *serve(void *arg)
{
    struct fake *f = arg;
    struct pollfd pfd = { .fd = f->lfd, .events = POLLIN };
    if (poll(&pfd, 1, 10000) != 1)
        return NULL;
    struct sockaddr_in peer;
    socklen_t plen = sizeof peer;
    int fd = accept(f->lfd, (struct sockaddr *)&peer, &plen);
    if (fd < 0)
        return NULL;
    inet_ntop(AF_INET, &peer.sin_addr, f->peer, sizeof f->peer);
    char buf[2048];
    size_t len = 0;
    if (write(fd, f->greeting, strlen(f->greeting)) < 0)
        goto out;
    for (;;) {
        pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
        if (poll(&pfd, 1, 10000) != 1)
            break;
        ssize_t r = read(fd, buf + len, sizeof buf - 1 - len);
        if (r <= 0)
            break;
        len += (size_t)r;
        char *nl;
        while ((nl = memchr(buf, '\n', len))) {
            size_t l = (size_t)(nl - buf) + 1;
            const struct rule *ru = f->rules;
            while (ru->prefix && strncasecmp(buf, ru->prefix, strlen(ru->prefix)))
                ru++;
            if (ru->prefix && write(fd, ru->reply, strlen(ru->reply)) < 0)
                goto out;
            memmove(buf, buf + l, len - l);
            len -= l;
        }
    }
out:
    close(fd);
    return NULL;
}

static void fake_start(struct fake *f, const char *greeting, const struct rule *rules)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof a;
    f->greeting = greeting;
    f->rules = rules;
    f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(f->lfd >= 0);
    assert_int_equal(bind(f->lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(f->lfd, 4), 0);
    assert_int_equal(getsockname(f->lfd, (struct sockaddr *)&a, &alen), 0);
    f->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&f->th, NULL, serve, f), 0);
}

static void fake_stop(struct fake *f)
{
    pthread_join(f->th, NULL);
    close(f->lfd);
}

/* Runs check_config with the given arguments; its output in out (caller frees). */
static int run_check(char **out, unsigned sample, int argc, const char **argv)
{
    struct config cfg;
    size_t len = 0;
    FILE *f = open_memstream(out, &len);
    assert_non_null(f);
    assert_int_equal(config_from_args(&cfg, argc, (char **)argv), 0);
    int rc = check_config(&cfg, sample, f, NULL);
    fclose(f);
    config_free(&cfg);
    print_message("%s", *out);
    return rc;
}

static int curl_up(void **state)
{
    (void)state;
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

static int curl_down(void **state)
{
    (void)state;
    curl_global_cleanup();
    return 0;
}

static void test_options(void **state)
{
    (void)state;
    const char *none[] = { "check", "--set", "users.password=pw%04d" };
    assert_int_equal(cmd_check(3, (char **)none), 2);             /* no target */
    const char *bad[] = { "check", "--sample", "0", "--smtp", "127.0.0.1:25" };
    assert_int_equal(cmd_check(5, (char **)bad), 2);
    const char *bad2[] = { "check", "--sample=x", "--smtp", "127.0.0.1:25" };
    assert_int_equal(cmd_check(4, (char **)bad2), 2);
    const char *help[] = { "check", "--help" };
    assert_int_equal(cmd_check(2, (char **)help), 0);
    const char *unknown[] = { "check", "--bogus", "1" };
    assert_int_equal(cmd_check(3, (char **)unknown), 2);
    /* a port out of range is a mistake of the settings, as the engine says */
    const char *port[] = { "check", "--smtp", "127.0.0.1:99999" };
    assert_int_equal(cmd_check(3, (char **)port), 2);
    const char *noport[] = { "check", "--pop3", "127.0.0.1" };
    assert_int_equal(cmd_check(3, (char **)noport), 2);
}

static void test_refused(void **state)
{
    (void)state;
    /* A port just freed is refused at once on loopback. */
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
    close(fd);
    char target[64], *out;
    snprintf(target, sizeof target, "127.0.0.1:%d", ntohs(a.sin_port));
    const char *argv[] = { "--smtp", target, "--pop3", target, "--set", "users.password=pw" };
    assert_int_equal(run_check(&out, 1, 6, argv), 3);
    char want[200];
    snprintf(want, sizeof want, "smtp %s: connection refused — is the server running?\n", target);
    assert_non_null(strstr(out, want));
    snprintf(want, sizeof want, "pop3 %s: connection refused — is the server running?\n", target);
    assert_non_null(strstr(out, want));
    assert_non_null(strstr(out, "2 of 2 checks found a problem\n"));
    free(out);
    /* three users sampled at one refusing POP3 target: one line, saying it stands
     * for three checks, and the count adds up to the lines' */
    assert_int_equal(run_check(&out, 3, 6, argv), 3);
    snprintf(want, sizeof want, "pop3 %s (3 checks, one per user sampled): connection refused", target);
    assert_non_null(strstr(out, want));
    assert_non_null(strstr(out, "\n4 of 4 checks found a problem\n"));
    free(out);
}

/* Checks one target served by a scripted server: the exit code, and the line
 * "[OK ]proto 127.0.0.1:PORT: line" in the output. flag/val: one more option. */
static void scripted(const char *proto, const char *greeting, const struct rule *rules,
                     const char *flag, const char *val, int want_rc, const char *line)
{
    struct fake f;
    fake_start(&f, greeting, rules);
    char opt[16], target[64], want[400], *out;
    snprintf(opt, sizeof opt, "--%s", proto);
    snprintf(target, sizeof target, "127.0.0.1:%d", f.port);
    const char *argv[] = { opt, target, "--set", "users.count=1", "--set", "users.password=pw",
                           flag ? flag : "--set", flag ? val : "run.label=x" };
    assert_int_equal(run_check(&out, 1, 8, argv), want_rc);
    snprintf(want, sizeof want, "%s%s %s: %s\n", want_rc ? "" : "OK ", proto, target, line);
    assert_non_null(strstr(out, want));
    assert_null(strstr(out, "pw"));              /* credentials never printed */
    free(out);
    fake_stop(&f);
}

static void test_greeting_refused(void **state)
{
    (void)state;
    static const struct rule rules[] = { { "QUIT", "221 bye\r\n" }, { NULL, NULL } };
    scripted("smtp", "554 5.3.2 too busy, try later\r\n", rules, NULL, NULL, 3,
             "the server refused the session at the greeting: 554 5.3.2 too busy, try later");
}

/* A hostile greeting: its escape sequence and bytes that are not UTF-8 reach the
 * terminal as \xNN (issue 13 item 2). */
static void test_greeting_hostile(void **state)
{
    (void)state;
    static const struct rule rules[] = { { "QUIT", "221 bye\r\n" }, { NULL, NULL } };
    scripted("smtp", "554 \x1b[2J\xff\xfe go \xc3\xa9\x07" "away\r\n", rules, NULL, NULL, 3,
             "the server refused the session at the greeting: 554 \\x1b[2J\\xff\\xfe go \xc3\xa9\\x07away");
}

/* Another service on the port (an SSH banner): said so, its words printable, at once
 * rather than after curl's timeout waiting for a reply it can parse. */
static void test_greeting_not_the_protocol(void **state)
{
    (void)state;
    static const struct rule rules[] = { { NULL, NULL } };
    scripted("smtp", "SSH-2.0-OpenSSH_9.2p1 \x1b[2J\r\n", rules, NULL, NULL, 3,
             "the greeting is not SMTP: SSH-2.0-OpenSSH_9.2p1 \\x1b[2J (another service on this port?)");
    scripted("pop3", "SSH-2.0-OpenSSH_9.2p1\r\n", rules, NULL, NULL, 3,
             "the greeting is not POP3: SSH-2.0-OpenSSH_9.2p1 (another service on this port?)");
}

static void test_auth_mechanism_not_offered(void **state)
{
    (void)state;
    static const struct rule rules[] = {
        { "EHLO", "250-fake\r\n250-AUTH LOGIN CRAM-MD5\r\n250 8BITMIME\r\n" },
        { "QUIT", "221 bye\r\n" },
        { "", "502 no\r\n" },
        { NULL, NULL },
    };
    scripted("smtp", "220 fake ESMTP\r\n", rules, "--smtp-auth", "plain", 3,
             "the server does not offer AUTH PLAIN (it offers LOGIN CRAM-MD5): set smtp.auth");
}

static void test_mailbox_in_use(void **state)
{
    (void)state;
    static const struct rule rules[] = {
        { "CAPA", "+OK\r\nUSER\r\nUIDL\r\n.\r\n" },
        { "USER", "+OK\r\n" },
        { "PASS", "-ERR [IN-USE] Mailbox is locked by another session\r\n" },
        { "QUIT", "+OK bye\r\n" },
        { NULL, NULL },
    };
    scripted("pop3", "+OK fake POP3\r\n", rules, NULL, NULL, 3,
             "user0000@test.local: mailbox in use (another session holds its lock): "
             "-ERR [IN-USE] Mailbox is locked by another session");
}

static void test_pop3_ok_counts(void **state)
{
    (void)state;
    static const struct rule rules[] = {
        { "CAPA", "+OK\r\nUSER\r\n.\r\n" },
        { "USER", "+OK\r\n" },
        { "PASS", "+OK logged in\r\n" },
        { "STAT", "+OK 7 12345\r\n" },
        { "QUIT", "+OK bye\r\n" },
        { NULL, NULL },
    };
    scripted("pop3", "+OK fake POP3\r\n", rules, NULL, NULL, 0,
             "user0000@test.local: greeting, no TLS, USER/PASS login, STAT: 7 messages, 12345 bytes");
}

static void test_apop_not_offered(void **state)
{
    (void)state;
    static const struct rule rules[] = {
        { "CAPA", "+OK\r\nUSER\r\n.\r\n" },
        { "QUIT", "+OK bye\r\n" },
        { "", "-ERR no\r\n" },
        { NULL, NULL },
    };
    scripted("pop3", "+OK fake POP3 without a timestamp\r\n", rules, "--pop3-auth", "apop", 3,
             "the server offers no APOP (no timestamp in its greeting): set pop3.auth = user or plain");
}

/* smtp.bind and pop3.bind: the preflight connects from the address the run will use
 * (a server or firewall admitting only some clients is checked from the right one);
 * 127.0.0.2 and 127.0.0.3 are this host's too (all of 127/8 is loopback). */
static void test_bind_source_address(void **state)
{
    (void)state;
    static const struct rule smtp_rules[] = {
        { "EHLO", "250 fake\r\n" }, { "QUIT", "221 bye\r\n" }, { "", "502 no\r\n" }, { NULL, NULL },
    };
    static const struct rule pop3_rules[] = {
        { "CAPA", "+OK\r\nUSER\r\n.\r\n" }, { "USER", "+OK\r\n" }, { "PASS", "+OK\r\n" },
        { "STAT", "+OK 0 0\r\n" }, { "QUIT", "+OK bye\r\n" }, { NULL, NULL },
    };
    struct fake s, p;
    fake_start(&s, "220 fake ESMTP\r\n", smtp_rules);
    fake_start(&p, "+OK fake POP3\r\n", pop3_rules);
    char st[64], pt[64], *out;
    snprintf(st, sizeof st, "127.0.0.1:%d", s.port);
    snprintf(pt, sizeof pt, "127.0.0.1:%d", p.port);
    const char *argv[] = { "--smtp", st, "--pop3", pt, "--set", "users.count=1", "--set", "users.password=pw",
                           "--set", "smtp.bind=127.0.0.2", "--set", "pop3.bind=[127.0.0.3]" };
    run_check(&out, 1, 12, argv);
    free(out);
    fake_stop(&s);
    fake_stop(&p);
    assert_string_equal(s.peer, "127.0.0.2");
    assert_string_equal(p.peer, "127.0.0.3");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_greeting_refused),
        cmocka_unit_test(test_greeting_hostile),
        cmocka_unit_test(test_greeting_not_the_protocol),
        cmocka_unit_test(test_auth_mechanism_not_offered),
        cmocka_unit_test(test_mailbox_in_use),
        cmocka_unit_test(test_pop3_ok_counts),
        cmocka_unit_test(test_apop_not_offered),
        cmocka_unit_test(test_bind_source_address),
    };
    return cmocka_run_group_tests(tests, curl_up, curl_down);
}
