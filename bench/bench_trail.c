/* bench_trail: the second pass over a soak's logs (verdict/trail.c): a million
 * Postfix-shaped lines (10 minutes at about 300 messages/s, 6 lines each, 160 MB)
 * against the trails of 40 examples (4 outcomes x 10, a queue id and a Message-ID
 * each), timed on the thread's CPU clock; prints ns per line and MB/s, and checks
 * every example found its lines. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "verdict/trail.h"

#define LINES 1000000u
#define EXAMPLES 40u

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void qid_of(uint64_t m, char *out)
{
    snprintf(out, 16, "%05llX%06llX", (unsigned long long)(m * 2654435761u & 0xfffff),
             (unsigned long long)(m & 0xffffff));
}

/* The lines Postfix 3.7 writes for a message over LMTP (tests/fixtures/logs/trail). */
static int make_line(char *out, size_t n, unsigned k, const char *qid, uint64_t m)
{
    switch (k) {
    case 0:
        return snprintf(out, n, "Dec 01 21:45:49 localhost postfix/smtpd[2774]: %s: client=unknown[127.0.0.1]", qid);
    case 1:
        return snprintf(out, n, "Dec 01 21:45:49 localhost postfix/cleanup[2799]: %s: "
                        "message-id=<5a38e71a.%llx@mailsoak.invalid>", qid, (unsigned long long)m);
    case 2:
        return snprintf(out, n, "Dec 01 21:45:49 localhost postfix/qmgr[1994]: %s: from=<mailsoak@test.local>, "
                        "size=934, nrcpt=1 (queue active)", qid);
    case 3:
        return snprintf(out, n, "Dec 01 21:45:51 localhost postfix/lmtp[2828]: %s: to=<user0000@test.local>, "
                        "relay=localhost[/tmp/tb/run/dovecot/lmtp], delay=0.07, delays=0.01/0/0.01/0.05, dsn=2.0.0, "
                        "status=sent (250 2.0.0 <user0000@test.local> gKSVDg9AD2v%06llx+zDdQ Saved)", qid,
                        (unsigned long long)m);
    case 4:
        return snprintf(out, n, "Dec 01 21:45:51 localhost postfix/qmgr[1994]: %s: removed", qid);
    default:
        return snprintf(out, n, "Dec 01 21:45:49 localhost postfix/smtpd[2774]: disconnect from unknown[127.0.0.1] "
                        "ehlo=1 mail=5 rcpt=5 data=5 quit=1 commands=17");
    }
}

int main(void)
{
    struct trails *t = trails_new();
    char qid[16], mid[64], line[600];
    for (unsigned i = 0; i < EXAMPLES; i++) {
        uint64_t m = 1000 + i * 4001u;
        qid_of(m, qid);
        snprintf(mid, sizeof mid, "<5a38e71a.%llx@mailsoak.invalid>", (unsigned long long)m);
        trails_want(t, m, i % 4 == 0 ? OUTCOME_LOST : i % 4 == 1 ? OUTCOME_DUPLICATED : i % 4 == 2 ? OUTCOME_CORRUPTED : OUTCOME_DELIVERED,
                    i % 4 == 3, qid, mid);
    }
    uint64_t bytes = 0, t0 = cpu_ns();
    for (unsigned i = 0; i < LINES; i++) {
        uint64_t m = i / 6;
        qid_of(m, qid);
        int n = make_line(line, sizeof line, i % 6, qid, m);
        trails_line(t, line, (size_t)n);
        bytes += (uint64_t)n + 1;
    }
    trails_done(t);
    double s = (double)(cpu_ns() - t0) / 1e9;
    unsigned found = 0;
    for (size_t i = 0; i < trails_count(t); i++)
        found += trails_get(t, i)->nlines >= 5;
    printf("bench_trail: %u lines (%.0f MB) against %u trails: %.2f s of CPU, %.0f ns per line, %.0f MB/s; "
           "%u of %u examples found their lines\n",
           LINES, (double)bytes / 1e6, EXAMPLES, s, s * 1e9 / LINES, (double)bytes / 1e6 / s, found, EXAMPLES);
    trails_free(t);
    return found == EXAMPLES ? 0 : 1;
}
