/* trail: each message's lines found by one pass over the logs, and its cause read
 * from them. The keys (ids) are found with a 4-byte hash of every position of a line
 * against a bitmap of the keys' first four bytes: a line that names none of them
 * costs one load and one bit test per byte. A key matches only as a whole word (no
 * letter or digit on either side, nor a ':' or '.' and a letter or digit after it),
 * so queue id 4XyZ1 is not found inside 4XyZ1B, nor Dovecot's session S in S:T2 (the
 * session's second transaction, another message); OpenSMTPD's envelope ids (its
 * 8-digit message id and 8 more) count as its message id. The patterns of the causes are the real servers' words (tests/fixtures/logs). */
#include "verdict/trail.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/reply.h"
#include "lib/alloc.h"
#include "lib/printable.h"

const char *const trail_cause_names[TC_COUNT] = {
    "", "bounced", "expired", "removed from the queue", "duplicated after a timeout",
    "duplicated after a lost connection",
    "delivered twice by the server", "copied in the store", "delivered, then gone from the mailbox",
    "deferred", "lost in a crash", "never logged", "unexplained",
};

#define HASH_BITS 16
#define NBUCKETS (1u << 12)

struct key {
    const char *s;              /* in its trail's keys[] */
    size_t len;
    size_t trail;
    int evp;                    /* 8 hex digits: OpenSMTPD's message id, also inside an envelope id */
    size_t next;                /* in its bucket's chain, + 1 (0 = end) */
};

struct trails {
    struct trail *v;
    size_t n;
    struct key *keys;
    size_t nkeys;
    size_t bucket[NBUCKETS];    /* first key + 1 */
    uint8_t bits[(1u << HASH_BITS) / 8];
    char *crash;                /* the first crash the run saw */
    uint64_t lineno;
    size_t *hit;                /* scratch: trails named by the current line */
};

static uint32_t hash4(const char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return (v * 2654435761u) >> (32 - HASH_BITS);
}

struct trails *trails_new(void)
{
    return xcalloc(1, sizeof(struct trails));
}

static void trail_free(struct trail *tr)
{
    for (unsigned i = 0; i < TRAIL_HEAD; i++)
        free(tr->head[i]);
    for (unsigned i = 0; i < TRAIL_TAIL; i++)
        free(tr->tail[i]);
    free(tr->cause_line);
    free(tr->bounce_line);
    free(tr->expire_line);
    free(tr->remove_line);
    free(tr->defer_line);
    free(tr->timeout_line);
}

void trails_free(struct trails *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        trail_free(&t->v[i]);
    free(t->v);
    free(t->keys);
    free(t->crash);
    free(t->hit);
    free(t);
}

static int is_alnum(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int all_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') || (s[i] >= 'A' && s[i] <= 'F')))
            return 0;
    return 1;
}

/* Keys live in their trail's keys[]; the index is rebuilt when one is added, since
 * trails_want may move the trails (a few dozen keys: cheap). */
static void reindex(struct trails *t)
{
    memset(t->bucket, 0, sizeof t->bucket);
    memset(t->bits, 0, sizeof t->bits);
    t->nkeys = 0;
    for (size_t i = 0; i < t->n; i++)
        for (unsigned k = 0; k < t->v[i].nkeys; k++) {
            const char *s = t->v[i].keys[k];
            size_t len = strlen(s);
            t->keys = xrealloc(t->keys, (t->nkeys + 1) * sizeof *t->keys);
            uint32_t h = hash4(s);
            struct key *key = &t->keys[t->nkeys];
            *key = (struct key){ s, len, i, len == 8 && all_hex(s, 8), t->bucket[h % NBUCKETS] };
            t->bucket[h % NBUCKETS] = ++t->nkeys;
            t->bits[h / 8] |= (uint8_t)(1u << (h % 8));
        }
}

/* Adds key s to trail i unless it has it, or it is too short to find safely. */
static int add_key(struct trail *tr, const char *s, size_t n)
{
    if (n < 4 || n >= TRAIL_KEY_MAX || tr->nkeys == TRAIL_KEYS)
        return 0;
    for (unsigned k = 0; k < tr->nkeys; k++)
        if (strlen(tr->keys[k]) == n && !memcmp(tr->keys[k], s, n))
            return 0;
    memcpy(tr->keys[tr->nkeys], s, n);
    tr->keys[tr->nkeys++][n] = 0;
    return 1;
}

void trails_want(struct trails *t, uint64_t seq, enum outcome v, int late, const char *qid, const char *msgid)
{
    t->v = xrealloc(t->v, (t->n + 1) * sizeof *t->v);
    struct trail *tr = &t->v[t->n++];
    memset(tr, 0, sizeof *tr);
    tr->seq = seq;
    tr->outcome = v;
    tr->late = late;
    tr->last_queue = tr->left = "";
    add_key(tr, qid, strlen(qid));
    size_t n = strlen(msgid);
    if (n >= 2 && msgid[0] == '<' && msgid[n - 1] == '>')
        add_key(tr, msgid + 1, n - 2);
    else
        add_key(tr, msgid, n);
    t->hit = xrealloc(t->hit, t->n * sizeof *t->hit);
    reindex(t);
}

static char *keep(const char *line, size_t len)
{
    char *s = xmalloc(TRAIL_LINE_MAX + 1);
    printable(s, TRAIL_LINE_MAX + 1, line, utf8_cut(line, len, TRAIL_LINE_MAX));
    return s;
}

static void keep_once(char **slot, const char *line, size_t len)
{
    if (!*slot)
        *slot = keep(line, len);
}

/* Case-insensitive search of an ASCII word (lower case) in a line. */
static int has(const char *line, size_t len, const char *w)
{
    size_t n = strlen(w);
    for (size_t i = 0; i + n <= len; i++)
        if ((line[i] | 0x20) == (w[0] | 0x20) && !strncasecmp(line + i, w, n))
            return 1;
    return 0;
}

/* What a line says about its message, in the servers' words: Postfix (status=...,
 * postsuper), Dovecot ("saved mail to"), Exim ("=>", "**", "==", "removed by"),
 * OpenSMTPD (result=...), sendmail (stat=...). */
static void read_line(struct trails *t, struct trail *tr, const char *line, size_t len)
{
    if (has(line, len, "status=sent") || has(line, len, " => ") || has(line, len, "result=ok") ||
        has(line, len, "stat=sent")) {
        tr->sent++;
        tr->last_sent_at = t->lineno;
    }
    if (has(line, len, "saved mail to"))
        tr->stored++;
    if (has(line, len, "status=bounced") || has(line, len, " ** ") || has(line, len, "result=permfail") ||
        has(line, len, "dsn=5.")) {
        tr->bounced++;
        keep_once(&tr->bounce_line, line, len);
    }
    if (has(line, len, "status=expired") || has(line, len, "status=force-expired") ||
        has(line, len, "retry timeout exceeded") || has(line, len, "message expired")) {
        tr->expired++;
        keep_once(&tr->expire_line, line, len);
    }
    if ((has(line, len, "postsuper[") && has(line, len, ": removed")) || has(line, len, " removed by ")) {
        tr->removed++;
        keep_once(&tr->remove_line, line, len);
        tr->left = "deleted";
    } else if (has(line, len, "qmgr[") && has(line, len, ": removed")) {
        tr->left = "left";
    }
    if (has(line, len, "status=deferred") || has(line, len, " == ") || has(line, len, "result=tempfail") ||
        has(line, len, "stat=deferred")) {
        tr->deferred++;
        free(tr->defer_line);   /* the last deferral is the one that explains */
        tr->defer_line = keep(line, len);
        tr->last_queue = "deferred";
        tr->left = "";
    }
    /* The final reply that never came: a timeout, or a connection lost while waiting
     * for it (Postfix: "... while sending end of data -- message may be sent more
     * than once"). */
    int timeout = has(line, len, "timed out") || has(line, len, "timeout");
    if (timeout || has(line, len, "may be sent more than once")) {
        tr->timeouts++;
        if (!tr->timeout_line)
            tr->timeout_conn = !timeout;
        keep_once(&tr->timeout_line, line, len);
        if (!tr->timeout_at)
            tr->timeout_at = t->lineno;
    }
    if (has(line, len, "(queue active)")) {
        tr->last_queue = "active";
        tr->left = "";          /* a message left and seen again is one re-queued */
    }
    if (has(line, len, "placed on hold"))
        tr->last_queue = "hold";
    /* The id the next server gave it: "status=sent (250 2.0.0 <rcpt> ID Saved)" is
     * Dovecot's LMTP session, which names Dovecot's own lines of this delivery. */
    const char *paren = memchr(line, '(', len), *close = paren ? memrchr(paren, ')', (size_t)(line + len - paren)) : NULL;
    if (close && (has(line, len, "status=sent") || has(line, len, "status=deferred"))) {
        char id[SMTP_QID_MAX + 1];
        size_t n = smtp_queue_id(paren + 1, (size_t)(close - paren - 1), id);   /* the reply inside (...) */
        if (n && add_key(tr, id, n))
            reindex(t);
    }
}

void trails_line(struct trails *t, const char *line, size_t len)
{
    t->lineno++;
    if (len < 4 || !t->nkeys)
        return;
    size_t nhit = 0;
    for (size_t i = 0; i + 4 <= len; i++) {
        uint32_t h = hash4(line + i);
        if (!(t->bits[h / 8] & (1u << (h % 8))))
            continue;
        for (size_t k = t->bucket[h % NBUCKETS]; k; k = t->keys[k - 1].next) {
            const struct key *key = &t->keys[k - 1];
            if (key->len > len - i || memcmp(line + i, key->s, key->len) ||
                (i && is_alnum((unsigned char)line[i - 1])))
                continue;
            size_t end = i + key->len;
            if (end < len && is_alnum((unsigned char)line[end]) &&
                !(key->evp && end + 8 <= len && all_hex(line + end, 8) &&
                  (end + 8 == len || !is_alnum((unsigned char)line[end + 8]))))
                continue;
            if (end + 1 < len && (line[end] == ':' || line[end] == '.') && is_alnum((unsigned char)line[end + 1]))
                continue;
            size_t j = 0;
            while (j < nhit && t->hit[j] != key->trail)
                j++;
            if (j == nhit)
                t->hit[nhit++] = key->trail;
        }
    }
    for (size_t j = 0; j < nhit; j++) {
        struct trail *tr = &t->v[t->hit[j]];
        if (tr->nhead < TRAIL_HEAD) {
            tr->head[tr->nhead++] = keep(line, len);
        } else {
            uint64_t k = (tr->nlines - TRAIL_HEAD) % TRAIL_TAIL;
            free(tr->tail[k]);
            tr->tail[k] = keep(line, len);
        }
        tr->nlines++;
        read_line(t, tr, line, len);
    }
}

void trails_crash(struct trails *t, const char *what)
{
    if (!t->crash)
        t->crash = keep(what, strlen(what));
}

static void set_cause(struct trail *tr, enum trail_cause c, const char *line)
{
    tr->cause = c;
    free(tr->cause_line);
    tr->cause_line = line ? xstrdup(line) : NULL;
}

/* What the lines show, by outcome. A loss with a delivery logged is the store's or
 * the reader's business (the server says it delivered); one without any line is a
 * message the server never wrote about, which no log can explain. */
static void classify(const struct trails *t, struct trail *tr)
{
    switch (tr->outcome) {
    case OUTCOME_DUPLICATED:
        if (tr->timeouts && (tr->last_sent_at > tr->timeout_at || tr->stored >= 2))
            set_cause(tr, tr->timeout_conn ? TC_DUP_CONN : TC_DUP_TIMEOUT, tr->timeout_line);
        else if (tr->sent >= 2 || tr->stored >= 2)
            set_cause(tr, TC_DUP_SERVER, NULL);
        else if (tr->sent || tr->stored)
            set_cause(tr, TC_DUP_STORE, NULL);
        else
            set_cause(tr, tr->nlines ? TC_UNEXPLAINED : TC_NEVER_LOGGED, NULL);
        return;
    case OUTCOME_LOST:
    case OUTCOME_PENDING:
        if (tr->bounced)
            set_cause(tr, TC_BOUNCED, tr->bounce_line);
        else if (tr->expired)
            set_cause(tr, TC_EXPIRED, tr->expire_line);
        else if (tr->removed)
            set_cause(tr, TC_REMOVED, tr->remove_line);
        else if (tr->sent || tr->stored)
            set_cause(tr, TC_DELIVERED_GONE, NULL);
        else if (tr->deferred)
            set_cause(tr, TC_DEFERRED, tr->defer_line);
        else if (t->crash)
            set_cause(tr, TC_CRASH, t->crash);
        else
            set_cause(tr, tr->nlines ? TC_UNEXPLAINED : TC_NEVER_LOGGED, NULL);
        return;
    default:                    /* corrupted, or delivered late */
        if (tr->deferred)
            set_cause(tr, TC_DEFERRED, tr->defer_line);
        else if (!tr->nlines)
            set_cause(tr, TC_NEVER_LOGGED, NULL);
        return;
    }
}

void trails_done(struct trails *t)
{
    for (size_t i = 0; i < t->n; i++)
        classify(t, &t->v[i]);
}

size_t trails_count(const struct trails *t)
{
    return t ? t->n : 0;
}

const struct trail *trails_get(const struct trails *t, size_t i)
{
    return t && i < t->n ? &t->v[i] : NULL;
}

const struct trail *trails_find(const struct trails *t, uint64_t seq)
{
    for (size_t i = 0; t && i < t->n; i++)
        if (t->v[i].seq == seq)
            return &t->v[i];
    return NULL;
}

size_t trail_lines(const struct trail *tr, const char **out, size_t max, uint64_t *skipped)
{
    size_t n = 0;
    for (unsigned i = 0; i < tr->nhead && n < max; i++)
        out[n++] = tr->head[i];
    uint64_t rest = tr->nlines > TRAIL_HEAD ? tr->nlines - TRAIL_HEAD : 0;
    uint64_t kept = rest < TRAIL_TAIL ? rest : TRAIL_TAIL;
    for (uint64_t i = 0; i < kept && n < max; i++)
        out[n++] = tr->tail[(rest - kept + i) % TRAIL_TAIL];
    *skipped = rest - kept;
    return n;
}
