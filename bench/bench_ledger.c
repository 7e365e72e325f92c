/* bench_ledger: the ledger at soak scale — a 10-minute run at 5,000 messages/s
 * (3 million entries) written by two sender threads and marked by two reader
 * threads at once; prints the cost per operation and the memory per message. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/ledger.h"
#include "lib/loop.h"

#define PER_WRITER 1500000u
#define USERS 1200u

struct arg {
    struct ledger *l;
    unsigned shard;
};

static void *writer(void *p)
{
    struct arg *a = p;
    for (unsigned i = 0; i < PER_WRITER; i++) {
        uint64_t idx = ledger_add(a->l, a->shard, i % USERS, 500, i, 0);
        ledger_accept(a->l, ledger_get(a->l, ledger_seq(a->shard, idx)), i / 5);
    }
    return NULL;
}

static void *reader(void *p)
{
    struct arg *a = p;
    uint64_t done = 0;
    /* chase the writer of the other shard: read what it has published */
    while (done < PER_WRITER) {
        struct ledger_entry *e = ledger_get(a->l, ledger_seq(a->shard, done));
        if (!e)
            continue;
        ledger_read(a->l, e, 0);
        done++;
    }
    return NULL;
}

int main(void)
{
    struct ledger l;
    if (ledger_init(&l, 2, USERS) < 0)
        return 1;
    pthread_t t[4];
    struct arg a[4] = { { &l, 0 }, { &l, 1 }, { &l, 1 }, { &l, 0 } };
    uint64_t t0 = mono_ns();
    pthread_create(&t[0], NULL, writer, &a[0]);
    pthread_create(&t[1], NULL, writer, &a[1]);
    pthread_create(&t[2], NULL, reader, &a[2]);
    pthread_create(&t[3], NULL, reader, &a[3]);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    double secs = (double)(mono_ns() - t0) / 1e9;
    struct ledger_outcome o;
    uint64_t t1 = mono_ns();
    ledger_outcome(&l, &o);
    double osecs = (double)(mono_ns() - t1) / 1e9;
    printf("ledger: %u messages added+accepted by 2 threads and read by 2 others in %.2f s "
           "(%.0f ns per message, wall); %zu bytes per entry; outcome pass %.0f ms; delivered %llu of %u\n",
           2 * PER_WRITER, secs, secs * 1e9 / (2.0 * PER_WRITER), sizeof(struct ledger_entry), osecs * 1e3,
           (unsigned long long)o.delivered, 2 * PER_WRITER);
    ledger_free(&l);
    return o.delivered == 2 * PER_WRITER ? 0 : 1;
}
