/* logwatch: tails log files and classifies their lines. A file is followed by inode:
 * after a rename the old inode is still read to its end (writers keep writing to it
 * until they reopen), and a copytruncate is noticed by comparing the bytes before
 * our position with the last bytes we read, then the lines written between our last
 * read and the copy are taken from the copy. A line counts in every class it matches;
 * the built-in classes are logwatch_classes.c's. */
#include "probe/logwatch.h"
#include "probe/logwatch_classes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/ere.h"
#include "probe/prefilter.h"
#include "settings/config.h"

enum {
    TAIL_BYTES = 256,           /* compared to tell an append from a rewrite */
    MAX_LINE = 64 * 1024,       /* longer lines are matched on their first 64 KiB */
    MAX_RETIRED = 8,            /* rotated-away files still read, per log */
    EXAMPLE_BYTES = 1000,
    CHUNK = 64 * 1024,
};

struct example {
    uint64_t t_ns;
    char *line;
};

struct lclass {
    char *name;
    char *pattern;
    regex_t re, except;
    int has_except;
    int trace;                  /* java_exception: a stack trace counts once */
    int prefiltered;            /* in the union (prefilter.h): skipped on lines it does not match */
    uint64_t count, pending;
    struct example *ex;
    size_t nex;
};

/* One open inode of a log: the current file or one rotated away. */
struct reader {
    int fd;
    off_t pos;
    unsigned char tail[TAIL_BYTES];
    size_t taillen;
    char *part;                 /* the line read so far, waiting for its newline */
    size_t plen;
    int overlong, skip_first, in_trace;
    off_t start;                /* where the run's part of this inode begins (logwatch_rescan) */
    int start_partial;          /* and a line being written then, not the run's, is there */
    uint64_t lineno;            /* lines ended so far (logwatch_scan_file) */
    logwatch_line_fn line_fn;
    void *line_ctx;
};

struct logfile {
    char *path;
    struct reader cur;
    dev_t dev;
    ino_t ino;
    struct reader retired[MAX_RETIRED];
    size_t nretired;
    int missing;
    int awaited;                /* did not exist when the run began; not yet seen */
};

struct logwatch {
    pthread_mutex_t mu;         /* guards counts and examples; files belong to the poller */
    uint64_t t0;
    size_t examples;
    struct lclass *cls;
    size_t ncls;
    regex_t continuation;
    struct logfile *files;
    size_t nfiles;
    uint64_t total, total_pending;
    logwatch_event_fn on_event;
    void *event_ctx;
    logwatch_match_fn on_match;
    void *match_ctx;
    char *chunk;
    struct prefilter *pre;      /* the classes' union: NULL after they change */
};

/* Lines that continue a Java stack trace. */
static const char continuation_re[] =
    "^[[:space:]]*(at |\\.\\.\\. [0-9]+ (more|common frames omitted))|^Caused by: |^[[:space:]]*Suppressed: ";

struct logwatch *logwatch_new(uint64_t t0_ns, size_t examples)
{
    struct logwatch *lw = xcalloc(1, sizeof *lw);
    pthread_mutex_init(&lw->mu, NULL);
    lw->t0 = t0_ns;
    lw->examples = examples;
    lw->chunk = xcalloc(1, CHUNK);
    if (regcomp(&lw->continuation, continuation_re, REG_EXTENDED | REG_NOSUB))
        abort();
    return lw;
}

static void class_clear(struct lclass *c)
{
    free(c->name);
    free(c->pattern);
    regfree(&c->re);
    if (c->has_except)
        regfree(&c->except);
    for (size_t i = 0; i < c->nex; i++)
        free(c->ex[i].line);
    free(c->ex);
    memset(c, 0, sizeof *c);
}

static void reader_close(struct reader *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
    free(r->part);
    r->part = NULL;
}

void logwatch_free(struct logwatch *lw)
{
    if (!lw)
        return;
    for (size_t i = 0; i < lw->ncls; i++)
        class_clear(&lw->cls[i]);
    free(lw->cls);
    for (size_t i = 0; i < lw->nfiles; i++) {
        struct logfile *f = &lw->files[i];
        reader_close(&f->cur);
        for (size_t j = 0; j < f->nretired; j++)
            reader_close(&f->retired[j]);
        free(f->path);
    }
    free(lw->files);
    prefilter_free(lw->pre);
    regfree(&lw->continuation);
    pthread_mutex_destroy(&lw->mu);
    free(lw->chunk);
    free(lw);
}

static ssize_t find_class(struct logwatch *lw, const char *name)
{
    for (size_t i = 0; i < lw->ncls; i++)
        if (!strcmp(lw->cls[i].name, name))
            return (ssize_t)i;
    return -1;
}

static int compile(regex_t *re, const char *pattern, int icase, char *err, size_t errlen)
{
    return ere_compile(re, pattern, REG_NOSUB | (icase ? REG_ICASE : 0), err, errlen);
}

/* Replaces in place, so a replaced class keeps its position in the output. */
static int put_class(struct logwatch *lw, const char *name, const char *pattern, const char *except,
                     int icase, int trace, char *err, size_t errlen)
{
    struct lclass c = { 0 };
    if (compile(&c.re, pattern, icase, err, errlen) < 0)
        return -1;
    if (except) {
        if (compile(&c.except, except, icase, err, errlen) < 0) {
            regfree(&c.re);
            return -1;
        }
        c.has_except = 1;
    }
    c.name = xstrndup(name, strlen(name));
    c.pattern = xstrndup(pattern, strlen(pattern));
    c.trace = trace;
    pthread_mutex_lock(&lw->mu);
    prefilter_free(lw->pre);
    lw->pre = NULL;
    ssize_t i = find_class(lw, name);
    if (i >= 0) {
        class_clear(&lw->cls[i]);
        lw->cls[i] = c;
    } else {
        lw->cls = xrealloc(lw->cls, (lw->ncls + 1) * sizeof *lw->cls);
        lw->cls[lw->ncls++] = c;
    }
    pthread_mutex_unlock(&lw->mu);
    return 0;
}

void logwatch_add_defaults(struct logwatch *lw)
{
    char err[200];
    for (size_t i = 0; i < logwatch_nbuiltins; i++) {
        const struct logwatch_builtin *b = &logwatch_builtins[i];
        if (put_class(lw, b->name, b->re, b->except, b->icase, b->trace, err, sizeof err) < 0)
            abort();        /* a bad built-in pattern is a bug caught by every test */
    }
}

int logwatch_set_class(struct logwatch *lw, const char *spec, char *err, size_t errlen)
{
    const char *colon = strchr(spec, ':');
    if (!colon) {
        snprintf(err, errlen, "expected 'name: regular expression'");
        return -1;
    }
    const char *name = spec, *name_end = colon;
    while (*name == ' ' || *name == '\t')
        name++;
    while (name_end > name && (name_end[-1] == ' ' || name_end[-1] == '\t'))
        name_end--;
    int icase = 0;
    if (name_end - name > 2 && !strncmp(name_end - 2, "/i", 2)) {
        icase = 1;
        name_end -= 2;
    }
    if (name_end == name) {
        snprintf(err, errlen, "the class has no name (expected 'name: regular expression')");
        return -1;
    }
    for (const char *p = name; p < name_end; p++)
        if (!(*p == '_' || *p == '-' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
              (*p >= 'A' && *p <= 'Z'))) {
            snprintf(err, errlen, "class names use letters, digits, '_' and '-'");
            return -1;
        }
    char *n = xstrndup(name, (size_t)(name_end - name));
    const char *pattern = colon + 1;
    while (*pattern == ' ' || *pattern == '\t')
        pattern++;
    int rc = 0;
    if (!*pattern) {
        pthread_mutex_lock(&lw->mu);
        prefilter_free(lw->pre);
        lw->pre = NULL;
        ssize_t i = find_class(lw, n);
        if (i >= 0) {
            class_clear(&lw->cls[i]);
            memmove(&lw->cls[i], &lw->cls[i + 1], (lw->ncls - (size_t)i - 1) * sizeof *lw->cls);
            lw->ncls--;
        }
        pthread_mutex_unlock(&lw->mu);
    } else {
        char why[200];
        rc = put_class(lw, n, pattern, NULL, icase, !strcmp(n, "java_exception"), why, sizeof why);
        if (rc < 0)
            snprintf(err, errlen, "class %s: bad regular expression: %s", n, why);
    }
    free(n);
    return rc;
}

static void reader_init(struct reader *r, int fd)
{
    memset(r, 0, sizeof *r);
    r->fd = fd;
}

/* Remembers the bytes before pos, to recognise this file's content later. */
static void reader_load_tail(struct reader *r)
{
    size_t want = r->pos < TAIL_BYTES ? (size_t)r->pos : TAIL_BYTES;
    ssize_t got = want ? pread(r->fd, r->tail, want, r->pos - (off_t)want) : 0;
    r->taillen = got == (ssize_t)want ? want : 0;
}

static int same_tail(int fd, const struct reader *r)
{
    unsigned char buf[TAIL_BYTES];
    if (!r->taillen)
        return 1;
    ssize_t got = pread(fd, buf, r->taillen, r->pos - (off_t)r->taillen);
    return got == (ssize_t)r->taillen && !memcmp(buf, r->tail, r->taillen);
}

static int open_log(struct logfile *f, int at_end, char *err, size_t errlen)
{
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        snprintf(err, errlen, "not a regular file");
        return -1;
    }
    reader_init(&f->cur, fd);
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    if (at_end) {
        f->cur.pos = f->cur.start = st.st_size;
        reader_load_tail(&f->cur);
        /* A line being written when the run began is not the run's. */
        f->cur.skip_first = f->cur.start_partial = f->cur.taillen && f->cur.tail[f->cur.taillen - 1] != '\n';
    }
    return 0;
}

int logwatch_add_file(struct logwatch *lw, const char *path, char *err, size_t errlen)
{
    struct logfile f = { .path = xstrndup(path, strlen(path)) };
    char why[200];
    int rc = 0;
    struct stat st;
    if (stat(path, &st) < 0 && errno == ENOENT) {
        /* Servers create some logs on first write (Exim's paniclog): the one that
         * appears during a soak is the one worth reading, from its first line. */
        reader_init(&f.cur, -1);
        f.missing = f.awaited = 1;
        snprintf(err, errlen, "%s does not exist yet: watching for it (read from its first line "
                 "once it appears)", path);
        rc = 1;
    } else if (open_log(&f, 1, why, sizeof why) < 0) {
        snprintf(err, errlen, "%s: %s", path, why);
        free(f.path);
        return -1;
    }
    lw->files = xrealloc(lw->files, (lw->nfiles + 1) * sizeof *lw->files);
    lw->files[lw->nfiles++] = f;
    return rc;
}

const char *logwatch_awaited(struct logwatch *lw, size_t i)
{
    for (size_t k = 0; k < lw->nfiles; k++)
        if (lw->files[k].awaited && i-- == 0)
            return lw->files[k].path;
    return NULL;
}

void logwatch_on_event(struct logwatch *lw, logwatch_event_fn fn, void *ctx)
{
    lw->on_event = fn;
    lw->event_ctx = ctx;
}

/* Rotations and truncations, to the watcher's listener (a macro: C cannot pass "..." on). */
void logwatch_on_match(struct logwatch *lw, logwatch_match_fn fn, void *ctx)
{
    lw->on_match = fn;
    lw->match_ctx = ctx;
}

#define event(lw, ...) probe_eventf((lw)->on_event, (lw)->event_ctx, __VA_ARGS__)

static int class_matches(const struct lclass *c, const char *line)
{
    return !regexec(&c->re, line, 0, NULL, 0) &&
           !(c->has_except && !regexec(&c->except, line, 0, NULL, 0));
}

/* One complete line, NUL-terminated. in_trace carries the Java stack-trace state of
 * the file the line came from: the frames after a counted exception are its own. */
static void count_line(struct logwatch *lw, char *line, int *in_trace, uint64_t now)
{
    if (*in_trace && !regexec(&lw->continuation, line, 0, NULL, 0))
        return;
    int any = 0, trace = 0;
    pthread_mutex_lock(&lw->mu);
    if (!lw->pre) {
        lw->pre = prefilter_new();
        for (size_t i = 0; i < lw->ncls; i++)
            lw->cls[i].prefiltered = prefilter_add(lw->pre, lw->cls[i].pattern);
    }
    int maybe = prefilter_maybe(lw->pre, line);
    for (size_t i = 0; i < lw->ncls; i++) {
        struct lclass *c = &lw->cls[i];
        if ((c->prefiltered && !maybe) || !class_matches(c, line))
            continue;
        trace |= c->trace;
        any = 1;
        c->count++;
        c->pending++;
        if (lw->on_match) {
            size_t n = strlen(line);
            lw->on_match(lw->match_ctx, i, now, line, n < EXAMPLE_BYTES ? n : EXAMPLE_BYTES);
        }
        if (c->nex < lw->examples) {
            if (!c->ex)
                c->ex = xcalloc(lw->examples, sizeof *c->ex);
            size_t n = strlen(line);
            c->ex[c->nex].t_ns = now;
            c->ex[c->nex++].line = xstrndup(line, n < EXAMPLE_BYTES ? n : EXAMPLE_BYTES);
        }
    }
    if (any) {
        lw->total++;
        lw->total_pending++;
    }
    pthread_mutex_unlock(&lw->mu);
    *in_trace = trace;
}

void logwatch_feed(struct logwatch *lw, const char *line, size_t len, uint64_t now_ns)
{
    char *copy = xstrndup(line, len);
    int in_trace = 0;
    count_line(lw, copy, &in_trace, now_ns);
    free(copy);
}

static void remember_tail(struct reader *r, const char *data, size_t n)
{
    if (n >= TAIL_BYTES) {
        memcpy(r->tail, data + n - TAIL_BYTES, TAIL_BYTES);
        r->taillen = TAIL_BYTES;
        return;
    }
    size_t keep = r->taillen + n > TAIL_BYTES ? TAIL_BYTES - n : r->taillen;
    memmove(r->tail, r->tail + r->taillen - keep, keep);
    memcpy(r->tail + keep, data, n);
    r->taillen = keep + n;
}

static void end_line(struct logwatch *lw, struct reader *r, uint64_t now)
{
    if (r->skip_first) {
        r->skip_first = 0;
    } else {
        size_t n = r->plen;
        if (n && r->part[n - 1] == '\r')
            n--;
        if (!r->part)
            r->part = xcalloc(1, MAX_LINE + 1);
        r->part[n] = 0;
        count_line(lw, r->part, &r->in_trace, now);
        if (r->line_fn)
            r->line_fn(r->line_ctx, r->lineno + 1, r->part);
    }
    r->lineno++;
    r->plen = 0;
    r->overlong = 0;
}

/* Splits data into lines; the unfinished last one waits in r->part. NUL bytes (the
 * hole a writer without O_APPEND leaves after a truncation) are dropped. */
static void consume(struct logwatch *lw, struct reader *r, const char *data, size_t n, uint64_t now)
{
    remember_tail(r, data, n);
    r->pos += (off_t)n;
    for (size_t i = 0; i < n; i++) {
        char ch = data[i];
        if (ch == '\n') {
            end_line(lw, r, now);
            continue;
        }
        if (!ch || r->overlong)
            continue;
        if (!r->part)
            r->part = xcalloc(1, MAX_LINE + 1);
        if (r->plen == MAX_LINE) {
            r->overlong = 1;
            continue;
        }
        r->part[r->plen++] = ch;
    }
}

static void drain(struct logwatch *lw, struct reader *r, uint64_t now)
{
    for (;;) {
        ssize_t got = pread(r->fd, lw->chunk, CHUNK, r->pos);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return;
        consume(lw, r, lw->chunk, (size_t)got, now);
    }
}

int logwatch_scan_file(struct logwatch *lw, const char *path, uint64_t now_ns, logwatch_line_fn fn, void *ctx,
                       char *err, size_t errlen)
{
    struct logfile f = { .path = (char *)path };
    char why[200];
    if (open_log(&f, 0, why, sizeof why) < 0) {
        snprintf(err, errlen, "%s: %s", path, why);
        return -1;
    }
    f.cur.line_fn = fn;
    f.cur.line_ctx = ctx;
    drain(lw, &f.cur, now_ns);
    if (f.cur.plen)             /* a last line without its newline is still a line */
        end_line(lw, &f.cur, now_ns);
    reader_close(&f.cur);
    return 0;
}

/* After a copytruncate, the lines written between our last read and the copy are in
 * the copy: a sibling whose name starts with the log's, holding our bytes at our
 * offset. The most recently modified such file wins. */
static int read_from_copy(struct logwatch *lw, struct logfile *f, uint64_t now, char *name, size_t nlen)
{
    const char *slash = strrchr(f->path, '/');
    const char *base = slash ? slash + 1 : f->path;
    char dir[4096] = ".";
    if (slash == f->path)
        snprintf(dir, sizeof dir, "/");
    else if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - f->path), f->path);
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    size_t blen = strlen(base);
    int best = -1;
    struct timespec best_mtime = { 0, 0 };
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, base, blen) || !e->d_name[blen])
            continue;
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0)
            continue;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < f->cur.pos ||
            !same_tail(fd, &f->cur) ||
            (best >= 0 && (st.st_mtim.tv_sec < best_mtime.tv_sec ||
                           (st.st_mtim.tv_sec == best_mtime.tv_sec &&
                            st.st_mtim.tv_nsec <= best_mtime.tv_nsec)))) {
            close(fd);
            continue;
        }
        if (best >= 0)
            close(best);
        best = fd;
        best_mtime = st.st_mtim;
        snprintf(name, nlen, "%s", e->d_name);
    }
    closedir(d);
    if (best < 0)
        return -1;
    int saved = f->cur.fd;
    f->cur.fd = best;
    drain(lw, &f->cur, now);
    f->cur.fd = saved;
    close(best);
    return 0;
}

static void check_truncated(struct logwatch *lw, struct logfile *f, uint64_t now)
{
    struct stat st;
    if (fstat(f->cur.fd, &st) < 0)
        return;
    if (st.st_size >= f->cur.pos && same_tail(f->cur.fd, &f->cur))
        return;
    char copy[256];
    off_t was = f->cur.pos;
    if (read_from_copy(lw, f, now, copy, sizeof copy) == 0) {
        event(lw, now, "log_truncated", "%s was truncated (copytruncate); read %lld bytes it had "
              "gained before that from its copy %s", f->path, (long long)(f->cur.pos - was), copy);
    } else {
        event(lw, now, "log_truncated", "%s was truncated and no copy holding what we had read "
              "was found beside it: lines written since the last read may be lost", f->path);
    }
    /* The unfinished line, if any, ended where the copy ended. */
    if (f->cur.plen)
        end_line(lw, &f->cur, now);
    f->cur.pos = 0;
    f->cur.start = 0;            /* what was before the truncation is in the copy, not here */
    f->cur.start_partial = 0;
    f->cur.taillen = 0;
    f->cur.in_trace = 0;
}

static void retire(struct logfile *f)
{
    if (f->nretired == MAX_RETIRED) {
        reader_close(&f->retired[0]);
        memmove(&f->retired[0], &f->retired[1], (MAX_RETIRED - 1) * sizeof f->retired[0]);
        f->nretired--;
    }
    f->retired[f->nretired++] = f->cur;
    reader_init(&f->cur, -1);
}

static void poll_file(struct logwatch *lw, struct logfile *f, uint64_t now)
{
    for (size_t i = 0; i < f->nretired; i++)
        drain(lw, &f->retired[i], now);
    if (f->cur.fd >= 0) {
        check_truncated(lw, f, now);
        drain(lw, &f->cur, now);
    }
    struct stat st;
    if (stat(f->path, &st) < 0) {
        if (!f->missing)
            event(lw, now, "log_rotated", "%s is gone (%s); still reading the file it was "
                  "and watching for a new one", f->path, strerror(errno));
        f->missing = 1;
        return;
    }
    if (f->cur.fd >= 0 && st.st_dev == f->dev && st.st_ino == f->ino)
        return;
    /* A new file under the name: the old one stays open for late writers. */
    if (f->cur.fd >= 0)
        retire(f);
    char why[200];
    if (open_log(f, 0, why, sizeof why) < 0) {
        reader_init(&f->cur, -1);
        return;
    }
    if (f->awaited)
        event(lw, now, "log_appeared", "%s appeared; reading it from its first line", f->path);
    else
        event(lw, now, "log_rotated", "%s was replaced by a new file (rotated); reading it from its "
              "start and the old one until the end of the run", f->path);
    f->missing = f->awaited = 0;
    drain(lw, &f->cur, now);
}

/* One inode again from r->start to its end now, split at newlines (a last line
 * without one included), without counting. */
static void rescan_reader(struct logwatch *lw, const struct reader *r, size_t file, logwatch_rescan_fn fn, void *ctx)
{
    if (r->fd < 0)
        return;
    char *line = xcalloc(1, MAX_LINE + 1);
    size_t n = 0;
    int skip = r->start_partial, overlong = 0;
    for (off_t pos = r->start;;) {
        ssize_t got = pread(r->fd, lw->chunk, CHUNK, pos);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        pos += got;
        for (ssize_t i = 0; i < got; i++) {
            char ch = lw->chunk[i];
            if (ch == '\n') {
                if (n && line[n - 1] == '\r')
                    n--;
                line[n] = 0;
                if (!skip)
                    fn(ctx, file, line, n);
                skip = overlong = 0;
                n = 0;
            } else if (ch && !overlong) {
                if (n == MAX_LINE)
                    overlong = 1;
                else
                    line[n++] = ch;
            }
        }
    }
    if (n && !skip) {
        line[n] = 0;
        fn(ctx, file, line, n);
    }
    free(line);
}

void logwatch_rescan(struct logwatch *lw, logwatch_rescan_fn fn, void *ctx)
{
    for (size_t i = 0; i < lw->nfiles; i++) {
        const struct logfile *f = &lw->files[i];
        for (size_t j = 0; j < f->nretired; j++)
            rescan_reader(lw, &f->retired[j], i, fn, ctx);
        rescan_reader(lw, &f->cur, i, fn, ctx);
    }
}

void logwatch_poll(struct logwatch *lw, uint64_t now_ns)
{
    for (size_t i = 0; i < lw->nfiles; i++)
        poll_file(lw, &lw->files[i], now_ns);
}

size_t logwatch_nclasses(struct logwatch *lw)
{
    pthread_mutex_lock(&lw->mu);
    size_t n = lw->ncls;
    pthread_mutex_unlock(&lw->mu);
    return n;
}

const char *logwatch_class_name(struct logwatch *lw, size_t i)
{
    return i < lw->ncls ? lw->cls[i].name : NULL;
}

int logwatch_matches(struct logwatch *lw, size_t i, const char *line)
{
    return i < lw->ncls && class_matches(&lw->cls[i], line);
}

uint64_t logwatch_count(struct logwatch *lw, size_t i)
{
    pthread_mutex_lock(&lw->mu);
    uint64_t n = i < lw->ncls ? lw->cls[i].count : 0;
    pthread_mutex_unlock(&lw->mu);
    return n;
}

uint64_t logwatch_total(struct logwatch *lw)
{
    pthread_mutex_lock(&lw->mu);
    uint64_t n = lw->total;
    pthread_mutex_unlock(&lw->mu);
    return n;
}

uint64_t logwatch_take(struct logwatch *lw, uint64_t *counts)
{
    pthread_mutex_lock(&lw->mu);
    for (size_t i = 0; i < lw->ncls; i++) {
        counts[i] = lw->cls[i].pending;
        lw->cls[i].pending = 0;
    }
    uint64_t n = lw->total_pending;
    lw->total_pending = 0;
    pthread_mutex_unlock(&lw->mu);
    return n;
}

size_t logwatch_classes(struct logwatch *lw, struct probe_class **out)
{
    pthread_mutex_lock(&lw->mu);
    struct probe_class *v = xcalloc(lw->ncls, sizeof *v);
    for (size_t i = 0; i < lw->ncls; i++) {
        const struct lclass *c = &lw->cls[i];
        v[i].name = xstrdup(c->name);
        v[i].count = c->count;
        v[i].ex = xcalloc(c->nex, sizeof *v[i].ex);
        v[i].nex = c->nex;
        for (size_t j = 0; j < c->nex; j++) {
            v[i].ex[j].t = c->ex[j].t_ns;
            v[i].ex[j].line = xstrdup(c->ex[j].line);
        }
    }
    size_t n = lw->ncls;
    pthread_mutex_unlock(&lw->mu);
    *out = v;
    return n;
}

struct logwatch *logwatch_from_config(const struct tested_server *cfg, uint64_t t0_ns,
                                      char *err, size_t errlen)
{
    struct logwatch *lw = logwatch_new(t0_ns, (size_t)cfg->log_examples);
    char why[400];
    if (cfg->log_defaults)
        logwatch_add_defaults(lw);
    for (size_t i = 0; i < cfg->log_classes.n; i++)
        if (logwatch_set_class(lw, cfg->log_classes.v[i], why, sizeof why) < 0) {
            snprintf(err, errlen, "server.log_class: '%s': %s", cfg->log_classes.v[i], why);
            logwatch_free(lw);
            return NULL;
        }
    for (size_t i = 0; i < cfg->logs.n; i++)
        if (logwatch_add_file(lw, cfg->logs.v[i], why, sizeof why) < 0) {
            snprintf(err, errlen, "server.log: %s", why);
            logwatch_free(lw);
            return NULL;
        }
    return lw;
}
