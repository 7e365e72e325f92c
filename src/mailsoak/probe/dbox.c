/* dbox: the messages of a Dovecot dbox mailbox (a dbox-Mails directory), counted
 * the way Dovecot would: dovecot.index holds the mailbox as of a log position, the
 * transaction log (dovecot.index.log, and .log.2 after a rotation) what happened
 * since. Dovecot rewrites the index only now and then, so the log must be replayed
 * to be exact. Every length and offset comes from files a server writes while we
 * read: each is checked against what was read. */
#include "probe/dbox.h"

#include <fcntl.h>
#include <stdlib.h>

#include "lib/alloc.h"
#include "lib/file.h"

/* Layout of Dovecot's mail index and transaction log (lib-index: mail-index.h,
 * mail-transaction-log.h), little-endian. */
enum {
    IDX_HEADER_SIZE = 4, IDX_RECORD_SIZE = 8, IDX_MESSAGES = 32,
    IDX_LOG_SEQ = 60, IDX_LOG_HEAD = 68, IDX_MIN = 72,
    LOG_HDR_SIZE = 2, LOG_FILE_SEQ = 8, LOG_MIN = 24,
    T_EXPUNGE = 0x0001, T_APPEND = 0x0002, T_EXPUNGE_GUID = 0x2000, T_EXPUNGE_PROT = 0xcd90,
    T_TYPE_MASK = 0x0fffffff, T_EXTERNAL = 0x10000000,
};

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Record sizes are stored 7 bits per byte with the high bit set, in units of 4. */
static uint32_t log_size(const unsigned char *p)
{
    if ((p[0] & p[1] & p[2] & p[3] & 0x80) == 0)
        return 0;
    return ((uint32_t)(p[3] & 0x7f) << 2) | ((uint32_t)(p[2] & 0x7f) << 9) |
           ((uint32_t)(p[1] & 0x7f) << 16) | ((uint32_t)(p[0] & 0x7f) << 23);
}

struct uidset {
    uint32_t *v;                /* ascending; 0 = expunged */
    size_t n, cap, live;
};

static void uid_add(struct uidset *u, uint32_t uid)
{
    /* Dovecot refuses appends below next_uid, so uids only grow. */
    if (!uid || (u->n && uid <= u->v[u->n - 1]))
        return;
    u->v = grow(u->v, &u->cap, u->n, 1, sizeof *u->v);
    u->v[u->n++] = uid;
    u->live++;
}

static void uid_expunge(struct uidset *u, uint32_t lo, uint32_t hi)
{
    size_t a = 0, b = u->n;
    while (a < b) {             /* first slot whose uid may be >= lo; zeros sort anywhere */
        size_t m = (a + b) / 2, k = m;
        while (k < b && !u->v[k])
            k++;
        if (k == b || u->v[k] >= lo)
            b = m;
        else
            a = k + 1;
    }
    for (size_t i = a; i < u->n; i++) {
        if (!u->v[i])
            continue;
        if (u->v[i] > hi)
            break;
        u->v[i] = 0;
        u->live--;
    }
}

/* The whole file, or NULL; a link is not followed (a store's files are its own). */
static unsigned char *slurp(int dfd, const char *name, size_t *len)
{
    struct buf b = { 0 };
    *len = 0;
    if (file_read(dfd, name, O_NOFOLLOW, &b) < 0) {
        buf_free(&b);
        return NULL;
    }
    *len = b.len;
    return (unsigned char *)(b.p ? b.p : xcalloc(1, 1));
}

/* Applies the log's records from offset on: appends add uids, expunges that a sync
 * carried out (EXTERNAL) remove them; expunge requests change nothing yet. */
static void replay_log(struct uidset *u, const unsigned char *log, size_t len, size_t from)
{
    size_t off = from;
    while (off + 8 <= len) {
        uint32_t size = log_size(log + off), type = le32(log + off + 4);
        if (size < 8 || off + size > len)
            break;              /* a record still being written */
        const unsigned char *d = log + off + 8;
        size_t dlen = size - 8;
        uint32_t t = type & T_TYPE_MASK;
        if (t == T_APPEND) {
            for (size_t i = 0; i + 8 <= dlen; i += 8)
                uid_add(u, le32(d + i));
        } else if (t == (T_EXPUNGE | T_EXPUNGE_PROT) && (type & T_EXTERNAL)) {
            for (size_t i = 0; i + 8 <= dlen; i += 8)
                uid_expunge(u, le32(d + i), le32(d + i + 4));
        } else if (t == (T_EXPUNGE_GUID | T_EXPUNGE_PROT) && (type & T_EXTERNAL)) {
            for (size_t i = 0; i + 20 <= dlen; i += 20)
                uid_expunge(u, le32(d + i), le32(d + i));
        }
        off += size;
    }
}

/* Messages of one dbox mailbox (a dbox-Mails directory): dovecot.index holds the
 * mailbox as of a log position, the transaction log what happened since. Dovecot
 * rewrites the index only now and then, so the log must be replayed to be exact. */
uint64_t dbox_mailbox_messages(int dfd)
{
    size_t ilen, llen, l2len;
    unsigned char *idx = slurp(dfd, "dovecot.index", &ilen);
    unsigned char *log = slurp(dfd, "dovecot.index.log", &llen);
    unsigned char *log2 = slurp(dfd, "dovecot.index.log.2", &l2len);
    struct uidset u = { 0 };
    uint32_t seq = 0, head = 0;
    if (idx && ilen >= IDX_MIN) {
        uint32_t hsize = le32(idx + IDX_HEADER_SIZE), rsize = le32(idx + IDX_RECORD_SIZE);
        uint32_t count = le32(idx + IDX_MESSAGES);
        seq = le32(idx + IDX_LOG_SEQ);
        head = le32(idx + IDX_LOG_HEAD);
        for (uint32_t i = 0; rsize >= 4 && i < count && hsize + (size_t)(i + 1) * rsize <= ilen; i++)
            uid_add(&u, le32(idx + hsize + (size_t)i * rsize));
    }
    const unsigned char *logs[2] = { log2, log };
    size_t lens[2] = { l2len, llen };
    for (int i = 0; i < 2; i++) {
        if (!logs[i] || lens[i] < LOG_MIN)
            continue;
        uint32_t hdr = (uint32_t)(logs[i][LOG_HDR_SIZE] | logs[i][LOG_HDR_SIZE + 1] << 8);
        uint32_t fseq = le32(logs[i] + LOG_FILE_SEQ);
        if (seq && fseq < seq)
            continue;           /* already in the index */
        replay_log(&u, logs[i], lens[i], seq && fseq == seq && head > hdr ? head : hdr);
    }
    free(idx);
    free(log);
    free(log2);
    free(u.v);
    return u.live;
}
