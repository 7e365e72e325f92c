/* imap_box: what IMAP keeps per mailbox beside the store: the UID and flags of each
 * message, matched to the store's listings by the store's own uid. Listings come
 * back from the store thread in the order it ran them, so merging each one keeps
 * the box equal to the store as of that listing. */
#include "server/imap_box.h"
#include "server/server.h"

#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"

struct imap_box *srv_imap_box(struct srv *srv, size_t user)
{
    if (!srv->imap_boxes)
        srv->imap_boxes = xcalloc(srv->users.n ? srv->users.n : 1, sizeof *srv->imap_boxes);
    if (!srv->imap_boxes[user]) {
        srv->imap_boxes[user] = xcalloc(1, sizeof **srv->imap_boxes);
        srv->imap_boxes[user]->uidnext = 1;
    }
    return srv->imap_boxes[user];
}

void srv_imap_boxes_free(struct srv *srv)
{
    if (!srv->imap_boxes)
        return;
    for (size_t u = 0; u < srv->users.n; u++)
        if (srv->imap_boxes[u]) {
            free(srv->imap_boxes[u]->v);
            free(srv->imap_boxes[u]);
        }
    free(srv->imap_boxes);
    srv->imap_boxes = NULL;
}

static int by_sid(const void *a, const void *b)
{
    return strcmp(((const struct srv_item *)a)->uid, ((const struct srv_item *)b)->uid);
}

static int ent_by_sid(const void *a, const void *b, void *box)
{
    const struct imap_box *bx = box;
    return strcmp(bx->v[*(const size_t *)a].sid, bx->v[*(const size_t *)b].sid);
}

void imap_box_merge(struct imap_box *b, struct srv_items *items, uint64_t now)
{
    /* The store's uids sort in delivery order (its names start with the time and a
     * counter), so new messages get ascending UIDs in the order they arrived. */
    if (items->n)                    /* qsort's array may not be NULL, even empty */
        qsort(items->v, items->n, sizeof *items->v, by_sid);
    size_t *idx = xmalloc((b->n ? b->n : 1) * sizeof *idx);
    for (size_t i = 0; i < b->n; i++)
        idx[i] = i;
    if (b->n)
        qsort_r(idx, b->n, sizeof *idx, ent_by_sid, b);
    unsigned char *keep = xcalloc(b->n ? b->n : 1, 1);
    size_t nnew = 0;
    unsigned char *fresh = xcalloc(items->n ? items->n : 1, 1);
    for (size_t i = 0; i < items->n; i++) {
        size_t lo = 0, hi = b->n;
        int found = 0;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            int c = strcmp(items->v[i].uid, b->v[idx[mid]].sid);
            if (!c) {
                keep[idx[mid]] = 1;
                found = 1;
                break;
            }
            if (c < 0)
                hi = mid;
            else
                lo = mid + 1;
        }
        if (!found) {
            fresh[i] = 1;
            nnew++;
        }
    }
    size_t w = 0;
    for (size_t i = 0; i < b->n; i++)
        if (keep[i])
            b->v[w++] = b->v[i];
    b->n = w;
    for (size_t i = 0; i < items->n; i++) {
        if (!fresh[i])
            continue;
        b->v = grow(b->v, &b->cap, b->n, 1, sizeof *b->v);
        struct imap_ent *e = &b->v[b->n++];
        memset(e, 0, sizeof *e);
        memcpy(e->sid, items->v[i].uid, sizeof e->sid);
        e->uid = b->uidnext++;
        e->date = now;
    }
    free(idx);
    free(keep);
    free(fresh);
}

struct imap_ent *imap_box_find(struct imap_box *b, uint32_t uid)
{
    size_t lo = 0, hi = b->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (b->v[mid].uid == uid)
            return &b->v[mid];
        if (b->v[mid].uid < uid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

void imap_box_remove(struct imap_box *b, uint32_t uid)
{
    struct imap_ent *e = imap_box_find(b, uid);
    if (!e)
        return;
    size_t i = (size_t)(e - b->v);
    memmove(e, e + 1, (b->n - i - 1) * sizeof *e);
    b->n--;
}

uint32_t imap_box_renumber(struct imap_box *b, uint32_t uid)
{
    struct imap_ent *e = imap_box_find(b, uid);
    if (!e)
        return 0;
    struct imap_ent copy = *e;
    imap_box_remove(b, uid);
    copy.uid = b->uidnext++;
    copy.flags = 0;
    b->v = grow(b->v, &b->cap, b->n, 1, sizeof *b->v);
    b->v[b->n++] = copy;
    return copy.uid;
}
