/* bench_reply: what the server's queue id costs a sender per accepted message, side
 * by side in one run: the end-of-data reply parsed as before (smtp_reply_feed), then
 * with its queue id taken out (smtp_queue_id), then also kept in the ledger
 * (ledger_set_qid), on the real servers' wordings (tests/fixtures/replies) and on a
 * reply naming no id (smtp-sink's); prints ns of CPU per reply (the thread's CPU
 * clock, the best of 5 rounds: the machine is shared, wall time is not ours) and the
 * ledger's bytes per message for the ids. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine/ledger.h"
#include "engine/reply.h"

#define N 1000000u
#define ROUNDS 5

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const char *const replies[] = {
    "250 2.0.0 Ok: queued as 914F2A73FB1",                         /* Postfix */
    "250 OK id=1xYVFM-0002HP-06",                                  /* Exim */
    "250 2.0.0 6B1LJHv5011118 Message accepted for delivery",      /* sendmail */
    "250 2.0.0 Ok",                                                /* smtp-sink: no id */
};

static volatile size_t sink;

int main(void)
{
    printf("%-58s %9s %9s %9s\n", "reply (ns per reply)", "feed", "+qid", "+ledger");
    for (size_t k = 0; k < sizeof replies / sizeof replies[0]; k++) {
        const char *line = replies[k];
        size_t len = strlen(line);
        struct smtp_reply r;
        char qid[SMTP_QID_MAX + 1];
        double ns[3];
        struct ledger l;
        if (ledger_init(&l, 1, 1) < 0)
            return 1;
        for (unsigned i = 0; i < N; i++)
            ledger_add(&l, 0, 0, 500, i, 0);
        for (int m = 0; m < 3 * ROUNDS; m++) {
            int mode = m % 3;
            uint64_t t0 = cpu_ns();
            for (unsigned i = 0; i < N; i++) {
                smtp_reply_reset(&r);
                sink += (size_t)smtp_reply_feed(&r, line, len);
                if (mode >= 1) {
                    size_t n = smtp_queue_id(r.text, r.len, qid);
                    sink += n;
                    if (mode == 2 && n) {
                        qid[n - 1] = (char)('A' + i % 26);   /* each message its own id, as servers give */
                        ledger_set_qid(&l, ledger_seq(0, i), qid, n);
                    }
                }
            }
            double t = (double)(cpu_ns() - t0) / N;
            if (m < 3 || t < ns[mode])
                ns[mode] = t;
        }
        /* the arena holds ROUNDS copies of each id (every round stored them again) */
        size_t text = 0;
        for (unsigned c = 0; c < LEDGER_MAX_CHUNKS; c++)
            text += l.shards[0].qids[c].len;
        size_t bytes = text / ROUNDS + (text ? (size_t)N * sizeof(uint32_t) : 0);
        printf("%-58s %9.1f %9.1f %9.1f   ids: %.1f bytes per message\n", line, ns[0], ns[1], ns[2],
               (double)bytes / N);
        ledger_free(&l);
    }
    return 0;
}
