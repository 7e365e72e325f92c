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
#include "probe/queue_exim.h"
#include "probe/queue_postfix.h"
#include "probe/queue_sendmail.h"
#include "probe/queue_smtpd.h"
#include "probe/queue_walk.h"

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
            DIR *sub = qw_open_sub(dirfd(d), e->d_name);
            if (sub) {
                files_walk(w, sub, depth + 1, sniff);
                closedir(sub);
            }
        } else if (type == DT_REG) {
            if (sniff && depth <= 1) {
                w->saw_exim |= queue_exim_file(e->d_name, 'H');
                w->saw_sendmail |= queue_sendmail_qf(e->d_name);
            }
            if (!w->deep) {
                w->count++;
                continue;
            }
            qw_begin(w);
            ssize_t got = qw_read_file(w, dirfd(d), e->d_name, HEADER_BYTES, NULL);
            if (got < 0 && errno == ENOENT)
                continue;
            qw_end(w, got >= 0 && qw_rfc822_id(w, w->buf, (size_t)got));
        }
    }
}

static void walk_dirs(struct queue *q, struct walk *w)
{
    int sniff = q->fmt == QUEUE_AUTO;
    if (q->fmt == QUEUE_POSTFIX && w->deep) {
        queue_postfix_scan(w, q->dirs, q->ready_check, q->ndirs);
        return;
    }
    for (size_t i = 0; i < q->ndirs; i++) {
        DIR *d = qw_open_path(q->dirs[i]);
        if (!d)
            continue;
        switch (q->fmt) {
        case QUEUE_POSTFIX: queue_postfix_walk(w, d, 0, q->ready_check[i]); break;
        case QUEUE_EXIM: queue_exim_walk(w, d, 0); break;
        case QUEUE_OPENSMTPD: queue_smtpd_walk(w, d); break;
        case QUEUE_SENDMAIL: queue_sendmail_walk(w, d, 0); break;
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
