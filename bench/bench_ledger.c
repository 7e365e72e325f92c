/* bench_ledger: the ledger at soak scale — a 10-minute run at 5,000 messages/s
 * (3 million entries) written by two sender threads and marked by two reader
 * threads at once; prints the cost per operation and the memory per message.
 * Twice: keeping every entry, then with a fifth thread compacting as the run's
 * controller does (each thread passing a quiescent point after each message). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "engine/ledger.h"
#include "lib/loop.h"

#define PER_WRITER 1500000u
#define USERS 1200u

struct arg {
    struct ledger *l;
    unsigned shard;                     /* written (a writer) or read (a reader) */
    unsigned quiet;                     /* the shard whose quiescent count this thread keeps */
    int compact;
};

static void *writer(void *p)
{
    struct arg *a = p;
    for (unsigned i = 0; i < PER_WRITER; i++) {
        uint64_t idx = ledger_add(a->l, a->shard, i % USERS, 500, i, 0);
        ledger_accept(a->l, ledger_get(a->l, ledger_seq(a->shard, idx)), i / 5);
        if (a->compact)
            ledger_quiescent(a->l, a->quiet);
    }
    if (a->compact)
        ledger_offline(a->l, a->quiet);
    return NULL;
}

static void *reader(void *p)
{
    struct arg *a = p;
    uint64_t done = 0;
    /* chase the writer of the other shard: read what it has published and accepted */
    while (done < PER_WRITER) {
        struct ledger_entry *e = ledger_get(a->l, ledger_seq(a->shard, done));
        if (e && (atomic_load_explicit(&e->state, memory_order_acquire) & LS_ACCEPTED)) {
            ledger_read(a->l, e, 0);
            done++;
        }
        if (a->compact)
            ledger_quiescent(a->l, a->quiet);
    }
    if (a->compact)
        ledger_offline(a->l, a->quiet);
    return NULL;
}

struct ctl {
    struct ledger *l;
    _Atomic int stop;
    uint64_t held_max;
};

static void *compactor(void *p)
{
    struct ctl *c = p;
    while (!atomic_load(&c->stop)) {
        usleep(10000);                  /* the run compacts once an interval (1 s by default) */
        ledger_compact(c->l);
        uint64_t h = ledger_held(c->l);
        c->held_max = h > c->held_max ? h : c->held_max;
    }
    return NULL;
}

static int run(int compact)
{
    struct ledger l;
    /* shards 2 and 3 are never written: the readers' quiescent counts */
    if (ledger_init(&l, 4, USERS) < 0)
        return 1;
    pthread_t t[5];
    struct arg a[4] = { { &l, 0, 0, compact }, { &l, 1, 1, compact }, { &l, 1, 2, compact }, { &l, 0, 3, compact } };
    struct ctl c = { &l, 0, 0 };
    uint64_t t0 = mono_ns();
    pthread_create(&t[0], NULL, writer, &a[0]);
    pthread_create(&t[1], NULL, writer, &a[1]);
    pthread_create(&t[2], NULL, reader, &a[2]);
    pthread_create(&t[3], NULL, reader, &a[3]);
    if (compact)
        pthread_create(&t[4], NULL, compactor, &c);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    double secs = (double)(mono_ns() - t0) / 1e9;
    if (compact) {
        atomic_store(&c.stop, 1);
        pthread_join(t[4], NULL);
        ledger_compact(&l);
    }
    struct ledger_outcome o;
    uint64_t t1 = mono_ns();
    ledger_outcome(&l, &o);
    double osecs = (double)(mono_ns() - t1) / 1e9;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    if (compact)
        printf("ledger, compacting: %u messages in %.2f s (%.0f ns per message, wall); at most %llu entries held, "
               "%llu at the end; outcome pass %.1f ms; delivered %llu of %u; max RSS so far %ld KiB\n",
               2 * PER_WRITER, secs, secs * 1e9 / (2.0 * PER_WRITER), (unsigned long long)c.held_max,
               (unsigned long long)ledger_held(&l), osecs * 1e3, (unsigned long long)o.delivered, 2 * PER_WRITER,
               ru.ru_maxrss);
    else
        printf("ledger: %u messages added+accepted by 2 threads and read by 2 others in %.2f s "
               "(%.0f ns per message, wall); %zu bytes per entry; outcome pass %.0f ms; delivered %llu of %u; "
               "max RSS %ld KiB\n",
               2 * PER_WRITER, secs, secs * 1e9 / (2.0 * PER_WRITER), sizeof(struct ledger_entry), osecs * 1e3,
               (unsigned long long)o.delivered, 2 * PER_WRITER, ru.ru_maxrss);
    ledger_free(&l);
    return o.delivered == 2 * PER_WRITER ? 0 : 1;
}

int main(void)
{
    /* compacting first: max RSS is the process's peak so far */
    int rc = run(1);
    return run(0) || rc;
}
