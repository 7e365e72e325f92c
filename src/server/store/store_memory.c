/* store_memory: mailboxes as arrays in the store thread's memory. Lost at exit by
 * design; it exists to measure the protocol engine without any disk in the way. */
#include "server/store/store_memory.h"
#include "server/store/store.h"
#include "lib/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mem_msg {
    char uid[72];
    char *data;
    size_t len;
    uint64_t size;
};

struct mem_box {
    struct mem_msg *v;
    size_t n, cap;
};

static int mem_init(struct srv_backend *b, char *err, size_t errlen)
{
    (void)err; (void)errlen;
    b->priv = xcalloc(b->users->n ? b->users->n : 1, sizeof(struct mem_box));
    return 0;
}

static void mem_fini(struct srv_backend *b)
{
    struct mem_box *boxes = b->priv;
    for (size_t u = 0; u < b->users->n; u++) {
        for (size_t i = 0; i < boxes[u].n; i++)
            free(boxes[u].v[i].data);
        free(boxes[u].v);
    }
    free(boxes);
}

static int mem_deliver(struct srv_backend *b, size_t user, const char *uid, const char *data,
                       size_t len, char *err, size_t errlen)
{
    struct mem_box *m = &((struct mem_box *)b->priv)[user];
    (void)err; (void)errlen;
    m->v = grow(m->v, &m->cap, m->n, 1, sizeof *m->v);
    struct mem_msg *msg = &m->v[m->n++];
    snprintf(msg->uid, sizeof msg->uid, "%s", uid);
    msg->data = xmalloc(len ? len : 1);
    memcpy(msg->data, data, len);
    msg->len = len;
    msg->size = srv_crlf_size(data, len);
    return 0;
}

static int mem_list(struct srv_backend *b, size_t user, struct srv_items *out, char *err, size_t errlen)
{
    struct mem_box *m = &((struct mem_box *)b->priv)[user];
    (void)err; (void)errlen;
    for (size_t i = 0; i < m->n; i++) {
        struct srv_item it = { .size = m->v[i].size, .key = i };
        memcpy(it.uid, m->v[i].uid, sizeof it.uid);
        srv_items_add(out, &it);
    }
    return 0;
}

/* The session holds the mailbox lock, so indexes cannot shift under it (deliveries
 * only append); the uid check guards against a bug breaking that promise. */
static struct mem_msg *find(struct mem_box *m, const struct srv_item *it)
{
    if (it->key < m->n && !strcmp(m->v[it->key].uid, it->uid))
        return &m->v[it->key];
    return NULL;
}

static int mem_fetch(struct srv_backend *b, size_t user, const struct srv_item *it, struct buf *out,
                     char *err, size_t errlen)
{
    struct mem_msg *msg = find(&((struct mem_box *)b->priv)[user], it);
    if (!msg) {
        snprintf(err, errlen, "message %s vanished", it->uid);
        return -1;
    }
    buf_append(out, msg->data, msg->len);
    return 0;
}

static int mem_expunge(struct srv_backend *b, size_t user, const struct srv_item *const *its, size_t n,
                       char *err, size_t errlen)
{
    struct mem_box *m = &((struct mem_box *)b->priv)[user];
    for (size_t i = 0; i < n; i++)
        if (!find(m, its[i])) {
            snprintf(err, errlen, "message %s vanished", its[i]->uid);
            return -1;
        }
    for (size_t i = 0; i < n; i++) {
        struct mem_msg *msg = find(m, its[i]);
        if (msg) {                   /* NULL: the same item twice */
            free(msg->data);
            msg->data = NULL;
        }
    }
    size_t w = 0;
    for (size_t r = 0; r < m->n; r++)
        if (m->v[r].data)
            m->v[w++] = m->v[r];
    m->n = w;
    return 0;
}

const struct srv_backend_ops srv_store_memory = {
    .name = "memory", .init = mem_init, .fini = mem_fini, .deliver = mem_deliver,
    .list = mem_list, .fetch = mem_fetch, .expunge = mem_expunge,
};
