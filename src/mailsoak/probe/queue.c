/* queue: the queue formats of Postfix, Exim, OpenSMTPD and sendmail (and plain files):
 * recognising a directory, counting its messages from directory entries, and reading
 * each queued message's X-Mailsoak-Id and pending recipients from the MTA's own queue
 * file format. The formats were taken from the MTAs' sources and checked against queue
 * files those MTAs wrote (tests/fixtures/queue). Every read is bounded: queue files are
 * written by the server under test and are not trusted. */
#include "probe/queue.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "probe/dirs.h"

enum {
    ID_MAX = 128,                   /* longer X-Mailsoak-Id values are not ours */
    ADDR_MAX = 512,                 /* longer recipient addresses are cut */
    RCPTS_LISTED = 1024,            /* recipients listed per message; beyond, unknown */
    HEADER_BYTES = 256 * 1024,      /* of an RFC 5322 message, what is read for headers */
    EXIM_H_MAX = 8 << 20,           /* a larger -H file is not read */
    ENVELOPE_MAX = 64 * 1024,       /* an OpenSMTPD envelope */
    PF_LINE = 1024,                 /* of a Postfix header record, what is kept */
    PF_JUMPS = 10000,               /* pointer records followed per file (Postfix's limit) */
    RR_BUF = 16 * 1024,
};

struct queue {
    char *path;
    enum queue_format asked, fmt;
    const char *layout;
    char **dirs;                    /* the directories that hold messages */
    unsigned char *ready_check;     /* Postfix incoming, maildrop: skip files being written */
    size_t ndirs;
    int decided;                    /* dirs and fmt are final */
};

static const char *const format_names[] = { "auto", "postfix", "exim", "opensmtpd", "sendmail", "files", NULL };

int queue_format_parse(const char *name, enum queue_format *out)
{
    for (int i = 0; format_names[i]; i++)
        if (!strcasecmp(name, format_names[i])) {
            *out = (enum queue_format)i;
            return 0;
        }
    return -1;
}

const char *queue_format_name(enum queue_format f)
{
    return (unsigned)f < sizeof format_names / sizeof format_names[0] - 1 ? format_names[f] : "?";
}

struct queue *queue_new(const char *path, enum queue_format fmt)
{
    struct queue *q = xcalloc(1, sizeof *q);
    q->path = xstrdup(path);
    q->asked = q->fmt = fmt;
    q->layout = "";
    return q;
}

static void clear_dirs(struct queue *q)
{
    for (size_t i = 0; i < q->ndirs; i++)
        free(q->dirs[i]);
    free(q->dirs);
    free(q->ready_check);
    q->dirs = NULL;
    q->ready_check = NULL;
    q->ndirs = 0;
}

void queue_free(struct queue *q)
{
    if (!q)
        return;
    clear_dirs(q);
    free(q->path);
    free(q);
}

enum queue_format queue_format(const struct queue *q)
{
    return q->fmt;
}

const char *queue_path(const struct queue *q)
{
    return q->path;
}

const char *queue_layout(const struct queue *q)
{
    return q->layout;
}

/* ------------------------------------------------------------------------------ */
/* Recognising a directory */

static const char *const postfix_queues[] = { "incoming", "active", "deferred", "hold", "maildrop", NULL };
/* Postfix's other queue_directory entries: delivery logs and its own state. */
static const char *const postfix_other[] = { "defer", "bounce", "trace", "flush", "saved", "corrupt",
                                             "pid", "private", "public", NULL };

static int in_list(const char *const *list, const char *name)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(list[i], name))
            return 1;
    return 0;
}

static int has_dir(int dfd, const char *name)
{
    struct stat st;
    return dfd >= 0 && fstatat(dfd, name, &st, 0) == 0 && S_ISDIR(st.st_mode);
}

/* `postfix check` creates every queue of a queue_directory; these three are enough. */
static int postfix_root(int dfd)
{
    return has_dir(dfd, "incoming") && has_dir(dfd, "active") && has_dir(dfd, "deferred");
}

/* Debian's exim4 packages create input, msglog and db under spool_directory; Exim
 * itself creates input and msglog with the first message. */
static int exim_root(int dfd)
{
    return has_dir(dfd, "input") || has_dir(dfd, "msglog");
}

/* smtpd creates queue, incoming, purge, temporary and offline at start. */
static int smtpd_root(int dfd)
{
    return has_dir(dfd, "queue") && (has_dir(dfd, "purge") || has_dir(dfd, "temporary") ||
                                     has_dir(dfd, "incoming"));
}

static const char *base_name(const char *path, char *buf, size_t len)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    size_t s = n;
    while (s > 0 && path[s - 1] != '/')
        s--;
    snprintf(buf, len, "%.*s", (int)(n - s), path + s);
    return buf;
}

static void add_dir(struct queue *q, const char *sub, int ready_check)
{
    q->dirs = xrealloc(q->dirs, (q->ndirs + 1) * sizeof *q->dirs);
    q->ready_check = xrealloc(q->ready_check, (q->ndirs + 1) * sizeof *q->ready_check);
    char *p;
    if (sub) {
        size_t n = strlen(q->path) + strlen(sub) + 2;
        p = xmalloc(n);
        snprintf(p, n, "%s/%s", q->path, sub);
    } else {
        p = xstrdup(q->path);
    }
    q->dirs[q->ndirs] = p;
    q->ready_check[q->ndirs++] = (unsigned char)ready_check;
}

static void decide(struct queue *q, enum queue_format fmt, const char *layout)
{
    q->fmt = fmt;
    q->layout = layout;
    q->decided = 1;
}

/* The messages are in sub (NULL: the directory itself), kept in fmt. */
static void use(struct queue *q, const char *sub, enum queue_format fmt, const char *layout)
{
    add_dir(q, sub, 0);
    decide(q, fmt, layout);
}

static void use_postfix_root(struct queue *q)
{
    for (int i = 0; postfix_queues[i]; i++)
        add_dir(q, postfix_queues[i], !strcmp(postfix_queues[i], "incoming") ||
                                          !strcmp(postfix_queues[i], "maildrop"));
    decide(q, QUEUE_POSTFIX, "postfix queue root");
}

/* A directory named after one of Postfix's queues; layout names it. */
static void use_postfix_queue(struct queue *q, const char *base)
{
    static const char *const layouts[] = { "postfix incoming queue", "postfix active queue",
                                           "postfix deferred queue", "postfix hold queue",
                                           "postfix maildrop queue" };
    const char *layout = "postfix queue directory";
    for (int i = 0; postfix_queues[i]; i++)
        if (!strcmp(base, postfix_queues[i]))
            layout = layouts[i];
    add_dir(q, NULL, !strcmp(base, "incoming") || !strcmp(base, "maildrop"));
    decide(q, QUEUE_POSTFIX, layout);
}

static int sendmail_name(const char *base)
{
    return !strcmp(base, "mqueue") || !strcmp(base, "clientmqueue") || !strcmp(base, "mqueue-client");
}

/* Fills dirs and fmt from what the directory shows now. Returns 1 when the path does
 * not exist, -1 (err) for a setting that cannot work, 0 otherwise; with auto and
 * nothing recognisable, 0 with decided still 0 (counted as files meanwhile). */
static int resolve(struct queue *q, char *err, size_t errlen)
{
    if (q->decided)
        return 0;
    int fd = open(q->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT)
            return 1;
        snprintf(err, errlen, "%s", e == ENOTDIR ? "not a directory" : strerror(e));
        return -1;
    }
    int parent = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char base[256];
    base_name(q->path, base, sizeof base);
    int rc = 0, root_pf = postfix_root(fd), parent_pf = postfix_root(parent);
    clear_dirs(q);
    if (parent_pf && !root_pf && in_list(postfix_other, base) &&
        (q->asked == QUEUE_AUTO || q->asked == QUEUE_POSTFIX)) {
        snprintf(err, errlen, "%s is not one of Postfix's message queues (%s): name the "
                 "queue_directory above it, or its incoming, active, deferred, hold and maildrop",
                 base, !strcmp(base, "defer") || !strcmp(base, "bounce") || !strcmp(base, "trace") ?
                 "it holds delivery logs, one per queued message" : "it holds Postfix's own state");
        rc = -1;
    } else {
        /* Exim and OpenSMTPD: the spool root, or the message directory itself. */
        int exim_r = has_dir(fd, "input"), smtpd_r = has_dir(fd, "queue");
        switch (q->asked) {
        case QUEUE_AUTO:
            if (root_pf)
                use_postfix_root(q);
            else if (parent_pf && in_list(postfix_queues, base))
                use_postfix_queue(q, base);
            else if (exim_root(fd))
                use(q, "input", QUEUE_EXIM, "exim spool directory");
            else if (!strcmp(base, "input") && exim_root(parent))
                use(q, NULL, QUEUE_EXIM, "exim input directory");
            else if (smtpd_root(fd))
                use(q, "queue", QUEUE_OPENSMTPD, "opensmtpd spool directory");
            else if (!strcmp(base, "queue") && smtpd_root(parent))
                use(q, NULL, QUEUE_OPENSMTPD, "opensmtpd queue directory");
            else if (sendmail_name(base) || has_dir(fd, "qf"))
                use(q, NULL, QUEUE_SENDMAIL, "sendmail queue directory");
            else
                add_dir(q, NULL, 0);     /* files until the names say more */
            break;
        case QUEUE_POSTFIX:
            if (root_pf)
                use_postfix_root(q);
            else
                use_postfix_queue(q, base);
            break;
        case QUEUE_EXIM:
            use(q, exim_r ? "input" : NULL, QUEUE_EXIM, exim_r ? "exim spool directory" : "exim input directory");
            break;
        case QUEUE_OPENSMTPD:
            use(q, smtpd_r ? "queue" : NULL, QUEUE_OPENSMTPD,
                smtpd_r ? "opensmtpd spool directory" : "opensmtpd queue directory");
            break;
        case QUEUE_SENDMAIL:
            use(q, NULL, QUEUE_SENDMAIL, "sendmail queue directory");
            break;
        case QUEUE_FILES:
            use(q, NULL, QUEUE_FILES, "files");
            break;
        }
    }
    if (parent >= 0)
        close(parent);
    close(fd);
    return rc;
}

int queue_check(struct queue *q, char *err, size_t errlen)
{
    int rc = resolve(q, err, errlen);
    /* A queue we may not list would count as empty and settle every verdict: Postfix
     * keeps its queues mode 0700 for its own user. */
    for (size_t i = 0; rc == 0 && i < q->ndirs; i++) {
        int fd = open(q->dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 && errno != ENOENT) {
            snprintf(err, errlen, "%s: %s (run as root or as the MTA's user)", q->dirs[i], strerror(errno));
            rc = -1;
        }
        if (fd >= 0)
            close(fd);
    }
    return rc;
}

/* ------------------------------------------------------------------------------ */
/* Names */

static int all_alnum(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]))
            return 0;
    return 1;
}

static int all_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

/* Short ids are hex, long ids (enable_long_queue_ids) base 52 plus digits. */
static int postfix_id(const char *name)
{
    size_t n = strlen(name);
    return n >= 6 && all_alnum(name, n);
}

/* "1xXxvJ-00059h-07" (Exim 4.96) or "1xXxvJ-00000059h-07Ab" (4.97 on), then suffix. */
static int exim_file(const char *name, char suffix)
{
    size_t n = strlen(name);
    if (n < 3 || name[n - 2] != '-' || name[n - 1] != suffix)
        return 0;
    n -= 2;
    if (!(n == 16 || n == 23) || name[6] != '-' || name[n == 16 ? 13 : 18] != '-')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]) && name[i] != '-')
            return 0;
    return 1;
}

/* qfID and hfID: a queued and a quarantined message; ids are 7 or more characters. */
static int sendmail_qf(const char *name)
{
    size_t n = strlen(name);
    return n >= 9 && (name[0] == 'q' || name[0] == 'h') && name[1] == 'f' && all_alnum(name + 2, n - 2);
}

static DIR *open_sub(int dfd, const char *name)
{
    int fd = dirs_open_at(dfd, name);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d && fd >= 0)
        close(fd);
    return d;
}

/* ------------------------------------------------------------------------------ */
/* A walk: counting (names only) or scanning (reading each message) */

struct walk {
    int deep;
    queue_msg_fn fn;
    void *ctx;
    struct queue_totals *t;
    uint64_t count;
    int saw_exim, saw_sendmail;     /* auto, while undecided: what the names suggest */
    /* the message being read */
    char id[ID_MAX + 1];
    size_t idlen;
    int have_id, rcpts_known, too_many;
    char *addrs;                    /* NUL-separated */
    size_t alen, acap;
    size_t *aoff;
    size_t naddr, aoffcap;
    const char **rcpts;
    size_t rcap;
    char *buf;                      /* file contents */
    size_t bcap;
};

static void msg_begin(struct walk *w)
{
    w->have_id = 0;
    w->idlen = 0;
    w->rcpts_known = 0;
    w->too_many = 0;
    w->alen = 0;
    w->naddr = 0;
}

static void msg_id(struct walk *w, const char *v, size_t n)
{
    while (n && (*v == ' ' || *v == '\t'))
        v++, n--;
    while (n && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r' || v[n - 1] == '\n'))
        n--;
    if (w->have_id || n > ID_MAX)
        return;                     /* the first one counts, as for the readers */
    memcpy(w->id, v, n);
    w->id[n] = 0;
    w->idlen = n;
    w->have_id = 1;
}

static void msg_rcpt(struct walk *w, const char *a, size_t n)
{
    w->rcpts_known = 1;
    w->t->recipients++;
    if (w->naddr == RCPTS_LISTED) {
        w->too_many = 1;
        return;
    }
    while (n && (*a == ' ' || *a == '\t'))
        a++, n--;
    while (n && (a[n - 1] == ' ' || a[n - 1] == '\t' || a[n - 1] == '\r' || a[n - 1] == '\n'))
        n--;
    if (n >= 2 && a[0] == '<' && a[n - 1] == '>')
        a++, n -= 2;
    if (n > ADDR_MAX)
        n = ADDR_MAX;
    w->addrs = grow(w->addrs, &w->acap, w->alen, n + 1, 1);
    w->aoff = grow(w->aoff, &w->aoffcap, w->naddr, 1, sizeof *w->aoff);
    memcpy(w->addrs + w->alen, a, n);
    w->addrs[w->alen + n] = 0;
    w->aoff[w->naddr++] = w->alen;
    w->alen += n + 1;
}

/* A recipient the layout lists as still to deliver, found delivered elsewhere. */
static void msg_unrcpt(struct walk *w, const char *a)
{
    for (size_t i = 0; i < w->naddr; i++)
        if (!strcasecmp(w->addrs + w->aoff[i], a)) {
            memmove(&w->aoff[i], &w->aoff[i + 1], (w->naddr - i - 1) * sizeof *w->aoff);
            w->naddr--;
            w->t->recipients--;
            return;
        }
}

static void msg_end(struct walk *w, int readable)
{
    struct queue_totals *t = w->t;
    t->messages++;
    if (!readable) {
        t->unreadable++;
        w->have_id = 0;
        w->rcpts_known = 0;
    }
    if (!w->rcpts_known)
        t->no_recipients++;
    if (w->have_id)
        t->with_id++;
    if (!w->fn)
        return;
    w->rcpts = grow(w->rcpts, &w->rcap, 0, w->naddr + 1, sizeof *w->rcpts);
    for (size_t i = 0; i < w->naddr; i++)
        w->rcpts[i] = w->addrs + w->aoff[i];
    struct queue_msg m = {
        .id = w->have_id ? w->id : NULL,
        .idlen = w->have_id ? w->idlen : 0,
        .rcpts = w->rcpts,
        .nrcpts = w->naddr,
        .rcpts_known = w->rcpts_known && !w->too_many,
    };
    w->fn(w->ctx, &m);
}

/* Up to max bytes of a file into w->buf (NUL-terminated); -1 if it cannot be read
 * (errno ENOENT: it went away meanwhile). too_big: the file holds more than max. */
static ssize_t read_file(struct walk *w, int dfd, const char *name, size_t max, int *too_big)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    w->buf = grow(w->buf, &w->bcap, 0, max + 1, 1);
    size_t got = 0;
    while (got < max) {
        ssize_t n = read(fd, w->buf + got, max - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            close(fd);
            return -1;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    char extra;
    if (too_big)
        *too_big = got == max && read(fd, &extra, 1) == 1;
    close(fd);
    w->buf[got] = 0;
    return (ssize_t)got;
}

/* Whether line (n bytes) is the header "X-Mailsoak-Id:"; v is its value. */
static int id_header(const char *line, size_t n, const char **v, size_t *vn)
{
    static const char name[] = "X-Mailsoak-Id:";
    size_t k = sizeof name - 1;
    if (n < k || strncasecmp(line, name, k))
        return 0;
    *v = line + k;
    *vn = n - k;
    return 1;
}

/* The header block of an RFC 5322 message (LF or CRLF lines). */
static void rfc822_id(struct walk *w, const char *p, size_t n)
{
    const char *end = p + n;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (len && p[len - 1] == '\r')
            len--;
        if (len == 0)
            return;                 /* end of the headers */
        const char *v;
        size_t vn;
        if (id_header(p, len, &v, &vn))
            msg_id(w, v, vn);
        if (!nl)
            return;
        p = nl + 1;
    }
}

/* ------------------------------------------------------------------------------ */
/* Postfix: queue files are records (type byte, length in 7-bit groups, data); see
 * src/global/record.c and rec_type.h. Recipients still to deliver are R records
 * (D when done, '/' when cancelled), each after its O (original recipient); the
 * message content starts at M, headers are N records (L for the first parts of a
 * long line) up to an empty N; p records point elsewhere in the file (edits). */

struct rec_reader {
    int fd;
    off_t pos, bstart;
    size_t blen;
    unsigned char buf[RR_BUF];
};

static int rr_byte(struct rec_reader *r)
{
    if (r->pos < r->bstart || r->pos >= r->bstart + (off_t)r->blen) {
        ssize_t n;
        do
            n = pread(r->fd, r->buf, sizeof r->buf, r->pos);
        while (n < 0 && errno == EINTR);
        if (n <= 0)
            return -1;
        r->bstart = r->pos;
        r->blen = (size_t)n;
    }
    return r->buf[r->pos++ - r->bstart];
}

/* One record: its type, and up to cap bytes of its data in out (the rest skipped).
 * Returns the type, -1 at the end of the file or on a malformed record. */
static int rec_get(struct rec_reader *r, char *out, size_t cap, size_t *len)
{
    int type = rr_byte(r);
    if (type < 0)
        return -1;
    size_t n = 0;
    for (unsigned shift = 0;; shift += 7) {
        int b = rr_byte(r);
        if (b < 0 || shift > 28)
            return -1;
        n |= (size_t)(b & 0177) << shift;
        if (!(b & 0200))
            break;
    }
    size_t keep = n < cap ? n : cap;
    for (size_t i = 0; i < keep; i++) {
        int b = rr_byte(r);
        if (b < 0)
            return -1;
        out[i] = (char)b;
    }
    r->pos += (off_t)(n - keep);
    *len = keep;
    return type;
}

static int postfix_read(struct walk *w, int dfd, const char *name)
{
    struct rec_reader *r = xcalloc(1, sizeof *r);
    r->fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (r->fd < 0) {
        int gone = errno == ENOENT;
        free(r);
        return gone ? -1 : 0;
    }
    enum { ENVELOPE, HEADERS, BODY, EXTRACTED } seg = ENVELOPE;
    char data[PF_LINE + 1], orig[ADDR_MAX + 1], line[PF_LINE + 1];
    size_t len, linelen = 0;
    int have_orig = 0, jumps = 0, complete = 0, type;
    long content_size = 0, data_offset = 0;
    while ((type = rec_get(r, data, PF_LINE, &len)) >= 0) {
        data[len] = 0;
        if (type == 'p') {
            long to = strtol(data, NULL, 10);
            if (to > 0) {
                if (++jumps > PF_JUMPS)
                    break;
                r->pos = to;
            }
            continue;
        }
        if (type == 'E') {
            complete = 1;
            break;
        }
        if (type == 'C' && seg == ENVELOPE) {
            char *end;
            content_size = strtol(data, &end, 10);
            data_offset = strtol(end, NULL, 10);
        } else if (type == 'M') {
            seg = HEADERS;
            if (!data_offset)
                data_offset = (long)r->pos;
        } else if (type == 'X') {
            seg = EXTRACTED;
        } else if (seg == HEADERS && (type == 'N' || type == 'L')) {
            size_t room = PF_LINE - linelen;
            memcpy(line + linelen, data, len < room ? len : room);
            linelen += len < room ? len : room;
            if (type == 'L')
                continue;
            if (linelen == 0) {
                /* End of the headers: the body is data_offset + content_size long, then X. */
                seg = BODY;
                if (content_size > 0 && data_offset > 0)
                    r->pos = (off_t)data_offset + content_size;
                continue;
            }
            const char *v;
            size_t vn;
            if (id_header(line, linelen, &v, &vn))
                msg_id(w, v, vn);
            linelen = 0;
        } else if (seg == ENVELOPE || seg == EXTRACTED) {
            if (type == 'O') {
                memcpy(orig, data, len < ADDR_MAX ? len : ADDR_MAX);
                orig[len < ADDR_MAX ? len : ADDR_MAX] = 0;
                have_orig = 1;
            } else if (type == 'R') {
                /* The address the client gave (O) is the one mailsoak knows. */
                if (have_orig)
                    msg_rcpt(w, orig, strlen(orig));
                else
                    msg_rcpt(w, data, len);
                have_orig = 0;
            } else if (type == 'D' || type == '/') {
                have_orig = 0;
                w->rcpts_known = 1;
            }
        }
    }
    close(r->fd);
    free(r);
    return complete || w->have_id ? 1 : 0;
}

/* Incoming and maildrop files count once their writer set the owner execute bit. */
static int postfix_ready(int dfd, const char *name)
{
    struct stat st;
    return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
           (st.st_mode & S_IRWXU) == S_IRWXU;
}

static void postfix_walk(struct walk *w, DIR *d, int depth, int ready_check)
{
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        unsigned char type = dirs_entry_type(dirfd(d), e);
        if (type == DT_DIR && depth < 3) {
            /* hash_queue_depth is at most 3 levels of one-character names */
            DIR *sub = open_sub(dirfd(d), e->d_name);
            if (sub) {
                postfix_walk(w, sub, depth + 1, ready_check);
                closedir(sub);
            }
        } else if (type == DT_REG && postfix_id(e->d_name)) {
            if (ready_check && !postfix_ready(dirfd(d), e->d_name))
                continue;
            if (!w->deep) {
                w->count++;
                continue;
            }
            msg_begin(w);
            int rc = postfix_read(w, dirfd(d), e->d_name);
            if (rc >= 0)
                msg_end(w, rc);
        }
    }
}

/* ------------------------------------------------------------------------------ */
/* Exim: the -H file (spec chapter "Format of spool files", src/spool_in.c). */

/* The next line of [*p, end): returns its start, sets *n to its length without the
 * newline and moves *p past it; NULL at the end. */
static const char *next_line(const char **p, const char *end, size_t *n)
{
    if (*p >= end)
        return NULL;
    const char *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));
    *n = nl ? (size_t)(nl - s) : (size_t)(end - s);
    *p = nl ? nl + 1 : end;
    return s;
}

/* A recipient line: the address, then optionally more fields, read from the right as
 * spool_in.c does: "<address> <d>,<d>,<d>" (Exim 3), "<address> <pno>" (early Exim 4),
 * "<address> <orcpt> <len>,<dsn> <errors_to> <len>,<pno>#<flags>" (spool_out.c).
 * Returns the address's length. */
static size_t exim_rcpt_len(const char *s, size_t n)
{
    long i = (long)n - 1;
    while (i > 0 && isdigit((unsigned char)s[i]))
        i--;
    if (i <= 0)
        return n;
    if (s[i] == ',') {
        do
            i--;
        while (i > 0 && (isdigit((unsigned char)s[i]) || s[i] == ','));
        return s[i] == ' ' ? (size_t)i : n;
    }
    if (s[i] == ' ')
        return (size_t)i;
    if (s[i] != '#')
        return n;
    int flags = atoi(s + i + 1);
    for (int bit = 1; bit <= 2; bit <<= 1) {
        if (flags & bit) {
            /* step left over "<len>,<n>" to the blank before it, then over the field */
            do
                i--;
            while (i > 0 && (isdigit((unsigned char)s[i]) || s[i] == ',' || s[i] == '-'));
            long len = atol(s + i + 1);
            if (len < 0 || len > i)
                return n;
            i -= len;
        }
        i--;                        /* the blank that ends the previous field */
    }
    return i > 0 ? (size_t)i : n;
}

static int exim_read(struct walk *w, int dfd, const char *name)
{
    int too_big = 0;
    ssize_t got = read_file(w, dfd, name, EXIM_H_MAX, &too_big);
    if (got < 0)
        return errno == ENOENT ? -1 : 0;
    if (too_big)
        return 0;
    const char *p = w->buf, *end = w->buf + got, *l;
    size_t n;
    for (int i = 0; i < 4; i++)         /* name, user uid gid, <sender>, time count */
        if (!next_line(&p, end, &n))
            return 0;
    /* Options: "-name value"; -aclc/-aclm/-acl are followed by <len> bytes and a newline. */
    for (;;) {
        const char *save = p;
        if (!(l = next_line(&p, end, &n)))
            return 0;
        if (l[0] != '-') {
            p = save;
            break;
        }
        const char *var = l + 1 + (n > 1 && l[1] == '-');
        if (*var == '(') {
            const char *close = memchr(var, ')', (size_t)(l + n - var));
            var = close ? close + 1 : l + n;
        }
        if (l + n - var > 4 && (!strncmp(var, "aclc ", 5) || !strncmp(var, "aclm ", 5) ||
                                !strncmp(var, "acl ", 4))) {
            const char *sp = l + n;
            while (sp > var && sp[-1] != ' ')
                sp--;
            long len = atol(sp);
            if (len < 0 || len + 1 > end - p)
                return 0;
            p += len + 1;
        }
    }
    /* The non-recipients tree: "XX", or nodes "<left Y|N><right Y|N> address". */
    size_t pending = 1;
    const char *done_start = p;
    size_t ndone = 0;
    while (pending) {
        if (!(l = next_line(&p, end, &n)))
            return 0;
        pending--;
        if (n == 2 && !strncmp(l, "XX", 2) && ndone == 0)
            break;
        if (n < 4 || (l[0] != 'Y' && l[0] != 'N') || (l[1] != 'Y' && l[1] != 'N'))
            return 0;
        pending += (l[0] == 'Y') + (l[1] == 'Y');
        ndone++;
    }
    const char *done_end = p;
    if (!(l = next_line(&p, end, &n)))
        return 0;
    long count = atol(l);
    if (count < 0 || count > 16384)
        return 0;
    for (long i = 0; i < count; i++) {
        if (!(l = next_line(&p, end, &n)))
            return 0;
        msg_rcpt(w, l, exim_rcpt_len(l, n));
    }
    w->rcpts_known = 1;
    /* Delivered: the tree's addresses, and the journal of an attempt in progress. */
    const char *q = done_start;
    while (ndone && (l = next_line(&q, done_end, &n)) && n >= 3) {
        char a[ADDR_MAX + 1];
        size_t an = n - 3 < ADDR_MAX ? n - 3 : ADDR_MAX;
        memcpy(a, l + 3, an);
        a[an] = 0;
        msg_unrcpt(w, a);
    }
    if (!(l = next_line(&p, end, &n)) || n != 0)
        return 0;
    /* Headers: "<length><flag> text", length counting every byte of the text. */
    while (p < end) {
        char *num_end;
        long len = strtol(p, &num_end, 10);
        if (num_end == p || num_end >= end || len < 0)
            return 0;
        char flag = *num_end;
        const char *text = num_end + 1;
        while (text < end && (*text == ' ' || *text == '\t' || *text == '\n'))
            text++;
        if (len > end - text)
            return 0;
        const char *v;
        size_t vn;
        if (flag != '*' && id_header(text, (size_t)len, &v, &vn)) {
            const char *nl = memchr(v, '\n', vn);
            msg_id(w, v, nl ? (size_t)(nl - v) : vn);
        }
        p = text + len;
    }
    return 1;
}

/* ID-J: one delivered address per line (or "address/transport" for homonyms). */
static void exim_journal(struct walk *w, int dfd, const char *hname)
{
    char jname[64];
    size_t n = strlen(hname);
    if (n >= sizeof jname)
        return;
    memcpy(jname, hname, n + 1);
    jname[n - 1] = 'J';
    ssize_t got = read_file(w, dfd, jname, ENVELOPE_MAX, NULL);
    if (got <= 0)
        return;
    char *p = w->buf;
    for (char *nl; (nl = strchr(p, '\n')); p = nl + 1) {
        *nl = 0;
        msg_unrcpt(w, p);
    }
}

static void exim_walk(struct walk *w, DIR *d, int depth)
{
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        unsigned char type = dirs_entry_type(dirfd(d), e);
        if (type == DT_DIR && depth == 0 && strlen(e->d_name) == 1) {
            DIR *sub = open_sub(dirfd(d), e->d_name);     /* split_spool_directory */
            if (sub) {
                exim_walk(w, sub, 1);
                closedir(sub);
            }
        } else if (type == DT_REG && exim_file(e->d_name, 'H')) {
            if (!w->deep) {
                w->count++;
                continue;
            }
            msg_begin(w);
            int rc = exim_read(w, dirfd(d), e->d_name);
            if (rc > 0)
                exim_journal(w, dirfd(d), e->d_name);
            if (rc >= 0)
                msg_end(w, rc);
        }
    }
}

/* ------------------------------------------------------------------------------ */
/* OpenSMTPD: queue/XX/MSGID/ (XX: the message id's top byte in hex) holds "message"
 * and one envelope per recipient still to deliver, named by the 16-hex envelope id
 * and written as "key: value" lines (envelope.c); "rcpt" is the RCPT TO address. */

static void smtpd_message(struct walk *w, int bucketfd, const char *msgid)
{
    DIR *d = open_sub(bucketfd, msgid);
    if (!d) {
        if (errno != ENOENT) {
            msg_begin(w);
            msg_end(w, 0);
        }
        return;
    }
    msg_begin(w);
    w->rcpts_known = 1;
    int readable = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, "message")) {
            ssize_t got = read_file(w, dirfd(d), "message", HEADER_BYTES, NULL);
            if (got >= 0) {
                rfc822_id(w, w->buf, (size_t)got);
                readable = 1;
            }
        } else if (strlen(e->d_name) == 16 && all_hex(e->d_name, 16)) {
            ssize_t got = read_file(w, dirfd(d), e->d_name, ENVELOPE_MAX, NULL);
            if (got < 0)
                continue;
            const char *p = w->buf, *end = w->buf + got, *l;
            size_t n;
            while ((l = next_line(&p, end, &n)))
                if (n > 6 && !strncmp(l, "rcpt: ", 6)) {
                    msg_rcpt(w, l + 6, n - 6);
                    break;
                }
        }
    }
    closedir(d);
    msg_end(w, readable);
}

static void smtpd_walk(struct walk *w, DIR *d)
{
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strlen(e->d_name) != 2 || !all_hex(e->d_name, 2))
            continue;
        DIR *bucket = open_sub(dirfd(d), e->d_name);
        if (!bucket)
            continue;
        struct dirent *m;
        while ((m = readdir(bucket))) {
            if (strlen(m->d_name) != 8 || !all_hex(m->d_name, 8))
                continue;
            if (w->deep)
                smtpd_message(w, dirfd(bucket), m->d_name);
            else
                w->count++;
        }
        closedir(bucket);
    }
}

/* ------------------------------------------------------------------------------ */
/* sendmail: the qf file (queue.c's queueup and readqf): one item per line, the first
 * character saying which; R lines are the recipients still to deliver ("R<flags>:
 * address"), H lines the headers ("H?<flags>?Name: value", continued on lines starting
 * with a blank), "." ends the file. */

static int sendmail_read(struct walk *w, int dfd, const char *name)
{
    ssize_t got = read_file(w, dfd, name, EXIM_H_MAX, NULL);
    if (got < 0)
        return errno == ENOENT ? -1 : 0;
    const char *p = w->buf, *end = w->buf + got, *l;
    size_t n;
    int ended = 0;
    w->rcpts_known = 1;
    while ((l = next_line(&p, end, &n))) {
        if (n == 1 && l[0] == '.') {
            ended = 1;
            break;
        }
        if (n > 1 && l[0] == 'R') {
            const char *a = l + 1, *colon = memchr(a, ':', n - 1);
            /* flags are letters; an address without flags has no colon before it */
            if (colon) {
                const char *f = a;
                while (f < colon && isalpha((unsigned char)*f))
                    f++;
                if (f == colon)
                    a = colon + 1;
            }
            msg_rcpt(w, a, (size_t)(l + n - a));
        } else if (n > 1 && l[0] == 'H') {
            const char *h = l + 1, *e = l + n;
            if (*h == '?') {
                const char *q = memchr(h + 1, '?', (size_t)(e - h - 1));
                h = q ? q + 1 : e;
            }
            const char *v;
            size_t vn;
            if (id_header(h, (size_t)(e - h), &v, &vn))
                msg_id(w, v, vn);
        }
    }
    return ended || w->have_id;
}

static void sendmail_walk(struct walk *w, DIR *d, int depth)
{
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        unsigned char type = dirs_entry_type(dirfd(d), e);
        if (type == DT_DIR && depth < 2 && strcmp(e->d_name, "df") && strcmp(e->d_name, "xf")) {
            DIR *sub = open_sub(dirfd(d), e->d_name);     /* qf/, or queue groups q1, q2 */
            if (sub) {
                sendmail_walk(w, sub, depth + 1);
                closedir(sub);
            }
        } else if (type == DT_REG && sendmail_qf(e->d_name)) {
            if (!w->deep) {
                w->count++;
                continue;
            }
            msg_begin(w);
            int rc = sendmail_read(w, dirfd(d), e->d_name);
            if (rc >= 0)
                msg_end(w, rc);
        }
    }
}

/* ------------------------------------------------------------------------------ */
/* Plain files; while auto is undecided, their names are watched for Exim's -H and
 * sendmail's qf files. */

static void files_walk(struct walk *w, DIR *d, int depth, int sniff)
{
    struct dirent *e;
    while ((e = readdir(d))) {
        if (dirs_dots(e->d_name))
            continue;
        unsigned char type = dirs_entry_type(dirfd(d), e);
        if (type == DT_DIR && depth < DIRS_MAX_DEPTH) {
            DIR *sub = open_sub(dirfd(d), e->d_name);
            if (sub) {
                files_walk(w, sub, depth + 1, sniff);
                closedir(sub);
            }
        } else if (type == DT_REG) {
            if (sniff && depth <= 1) {
                w->saw_exim |= exim_file(e->d_name, 'H');
                w->saw_sendmail |= sendmail_qf(e->d_name);
            }
            if (!w->deep) {
                w->count++;
                continue;
            }
            msg_begin(w);
            ssize_t got = read_file(w, dirfd(d), e->d_name, HEADER_BYTES, NULL);
            if (got < 0 && errno == ENOENT)
                continue;
            if (got >= 0)
                rfc822_id(w, w->buf, (size_t)got);
            msg_end(w, got >= 0);
        }
    }
}

/* ------------------------------------------------------------------------------ */

static void walk_dirs(struct queue *q, struct walk *w)
{
    int sniff = q->fmt == QUEUE_AUTO;
    for (size_t i = 0; i < q->ndirs; i++) {
        /* the configured directory may be a link (/var/spool/postfix often is) */
        int fd = open(q->dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
            if (fd >= 0)
                close(fd);
            continue;
        }
        switch (q->fmt) {
        case QUEUE_POSTFIX: postfix_walk(w, d, 0, q->ready_check[i]); break;
        case QUEUE_EXIM: exim_walk(w, d, 0); break;
        case QUEUE_OPENSMTPD: smtpd_walk(w, d); break;
        case QUEUE_SENDMAIL: sendmail_walk(w, d, 0); break;
        case QUEUE_AUTO:
        case QUEUE_FILES: files_walk(w, d, 0, sniff); break;
        }
        closedir(d);
    }
}

static void walk_free(struct walk *w)
{
    free(w->addrs);
    free(w->aoff);
    free(w->rcpts);
    free(w->buf);
}

/* Walks the queue. While auto has not recognised the directory, a walk by names comes
 * first: Exim's -H or sendmail's qf names decide it before messages are counted or read. */
static void walk(struct queue *q, struct walk *w)
{
    char err[300];
    if (resolve(q, err, sizeof err) != 0)
        return;
    if (q->fmt == QUEUE_AUTO) {
        struct queue_totals scratch = { 0 };
        struct walk names = { .t = &scratch };
        walk_dirs(q, &names);
        walk_free(&names);
        if (names.saw_exim)
            decide(q, QUEUE_EXIM, "exim input directory");
        else if (names.saw_sendmail)
            decide(q, QUEUE_SENDMAIL, "sendmail queue directory");
        else if (!w->deep) {
            w->count = names.count;
            return;
        }
    }
    walk_dirs(q, w);
}

uint64_t queue_count(struct queue *q)
{
    struct queue_totals t = { 0 };
    struct walk w = { .t = &t };
    walk(q, &w);
    walk_free(&w);
    return w.count;
}

void queue_scan(struct queue *q, queue_msg_fn fn, void *ctx, struct queue_totals *t)
{
    struct walk w = { .deep = 1, .fn = fn, .ctx = ctx, .t = t };
    walk(q, &w);
    walk_free(&w);
}
