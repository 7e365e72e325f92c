/* corpus: indexing an mbox, a maildir or a folder of messages, and turning one
 * message's bytes into what is sent. */
#include "engine/corpus.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/alloc.h"

static void put(struct corpus_buf *b, const void *p, size_t n)
{
    if (!n)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        b->p = xrealloc(b->p, cap);
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

void corpus_buf_free(struct corpus_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

static void add_msg(struct corpus *c, uint32_t file, uint64_t off, uint64_t len)
{
    if (!len || len > CORPUS_MAX_MSG) {
        c->skipped++;
        return;
    }
    c->msgs = grow(c->msgs, &c->cap, c->n, 1, sizeof *c->msgs);
    c->msgs[c->n++] = (struct corpus_msg){ file, (uint32_t)len, off };
}

static int is_from_line(const char *p, size_t left)
{
    return left >= 5 && !memcmp(p, "From ", 5);
}

/* The end of the message starting at start by its Content-Length header, when it
 * has one that ends exactly where the next "From " line (or the file) begins, as
 * Dovecot writes mboxes: it does not escape "From " in bodies. 0 when not. */
static size_t by_content_length(const char *buf, size_t len, size_t start)
{
    size_t i = start, clen = 0;
    int have = 0;
    while (i < len) {
        const char *nl = memchr(buf + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - buf) + 1 : len, n = end - i;
        if (n <= 2 && (n == 1 || buf[i] == '\r'))
            break;                   /* the end of the headers */
        if (n > 15 && !strncasecmp(buf + i, "Content-Length:", 15)) {
            char tmp[24];
            size_t k = n - 15 < sizeof tmp - 1 ? n - 15 : sizeof tmp - 1;
            memcpy(tmp, buf + i + 15, k);
            tmp[k] = 0;
            char *e;
            unsigned long long v = strtoull(tmp, &e, 10);
            while (*e == ' ' || *e == '\r' || *e == '\n')
                e++;
            if (!*e && v <= CORPUS_MAX_MSG) {
                clen = (size_t)v;
                have = 1;
            }
        }
        i = end;
    }
    if (!have || i >= len)
        return 0;
    size_t body = i + (buf[i] == '\r' ? 2 : 1);
    if (body > len || clen > len - body)
        return 0;
    size_t e = body + clen;
    if (e == len)
        return e;
    if (is_from_line(buf + e, len - e))
        return e;
    if (buf[e] == '\n' && is_from_line(buf + e + 1, len - e - 1))
        return e + 1;
    return 0;
}

void corpus_mbox_split(const char *buf, size_t len, void (*fn)(void *arg, size_t off, size_t len), void *arg)
{
    /* a message starts after a "From " line at the start of the file or of a line;
     * text before the first one is not a message */
    size_t start = (size_t)-1, i = 0;
    while (i < len) {
        if (start != (size_t)-1 && i == start) {
            size_t e = by_content_length(buf, len, start);
            if (e > start) {         /* trusted: skip to the next From_ line */
                fn(arg, start, e - start);
                start = (size_t)-1;
                i = e;
                continue;
            }
        }
        const char *nl = memchr(buf + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - buf) + 1 : len;
        if (is_from_line(buf + i, len - i)) {
            if (start != (size_t)-1)
                fn(arg, start, i - start);
            start = end;
        }
        i = end;
    }
    if (start != (size_t)-1 && start < len)
        fn(arg, start, len - start);
}

struct split_ctx {
    struct corpus *c;
    uint32_t file;
};

static void on_mbox_msg(void *arg, size_t off, size_t len)
{
    struct split_ctx *s = arg;
    add_msg(s->c, s->file, off, len);
}

static int add_file(struct corpus *c, const char *path)
{
    c->files = xrealloc(c->files, (c->nfiles + 1) * sizeof *c->files);
    c->fds = xrealloc(c->fds, (c->nfiles + 1) * sizeof *c->fds);
    c->files[c->nfiles] = xstrdup(path);
    c->fds[c->nfiles] = open(path, O_RDONLY | O_CLOEXEC);
    return c->fds[c->nfiles++] < 0 ? -1 : 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of dir (not dot files), sorted, one message each. */
static int add_dir(struct corpus *c, const char *dir, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        names = grow(names, &cap, n, 1, sizeof *names);
        names[n++] = xstrdup(de->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (!rc && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (add_file(c, path) < 0) {
                snprintf(err, errlen, "%s: %s", path, strerror(errno));
                rc = -1;
            } else {
                add_msg(c, (uint32_t)(c->nfiles - 1), 0, (uint64_t)st.st_size);
            }
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int corpus_open(struct corpus *c, const char *path, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    struct stat st;
    if (stat(path, &st) < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = 0;
    if (S_ISDIR(st.st_mode)) {
        char sub[4096];
        struct stat ss;
        snprintf(sub, sizeof sub, "%s/cur", path);
        if (stat(sub, &ss) == 0 && S_ISDIR(ss.st_mode)) {   /* a maildir */
            rc = add_dir(c, sub, err, errlen);
            snprintf(sub, sizeof sub, "%s/new", path);
            if (!rc && stat(sub, &ss) == 0)
                rc = add_dir(c, sub, err, errlen);
        } else {
            rc = add_dir(c, path, err, errlen);
        }
    } else {
        c->mbox = 1;
        if (add_file(c, path) < 0) {
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
            rc = -1;
        } else if (st.st_size > 0) {
            /* Mapped for this indexing alone, at setup before any load: a corpus cut
             * short meanwhile ends the program before anything was measured. Sends
             * read with pread, where a file that shrank gives what is left. */
            void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, c->fds[0], 0);
            if (m == MAP_FAILED) {
                snprintf(err, errlen, "%s: %s", path, strerror(errno));
                rc = -1;
            } else {
                struct split_ctx s = { c, 0 };
                corpus_mbox_split(m, (size_t)st.st_size, on_mbox_msg, &s);
                munmap(m, (size_t)st.st_size);
            }
        }
    }
    if (!rc && !c->n) {
        snprintf(err, errlen, "%s: no messages%s", path, c->mbox ? " (an mbox: no 'From ' line)" : "");
        rc = -1;
    }
    if (rc)
        corpus_free(c);
    return rc;
}

void corpus_free(struct corpus *c)
{
    for (size_t i = 0; i < c->nfiles; i++) {
        free(c->files[i]);
        if (c->fds[i] >= 0)
            close(c->fds[i]);
    }
    free(c->files);
    free(c->fds);
    free(c->msgs);
    memset(c, 0, sizeof *c);
}

int corpus_read(const struct corpus *c, size_t i, struct corpus_buf *raw)
{
    const struct corpus_msg *m = &c->msgs[i % c->n];
    raw->len = 0;
    if (m->len > raw->cap) {
        raw->p = xrealloc(raw->p, m->len);
        raw->cap = m->len;
    }
    ssize_t got = pread(c->fds[m->file], raw->p, m->len, (off_t)m->off);
    if (got < 0)
        return -1;
    raw->len = (size_t)got;            /* a file that shrank gives what is left */
    return 0;
}

/* Headers a delivery adds, or that carry the original envelope or ids. */
static int dropped(const char *line, size_t len)
{
    static const char *const names[] = {
        "to", "cc", "bcc", "message-id", "return-path", "delivered-to", "received", "x-original-to",
        "status", "x-status", "x-keywords", "x-uid", "x-imapbase", "x-imap", "content-length", "lines", NULL,
    };
    const char *colon = memchr(line, ':', len);
    if (!colon)
        return 1;                      /* not a header: left out */
    size_t n = (size_t)(colon - line);
    if (n >= 11 && !strncasecmp(line, "x-mailsoak-", 11))
        return 1;
    for (const char *const *p = names; *p; p++)
        if (strlen(*p) == n && !strncasecmp(line, *p, n))
            return 1;
    return 0;
}

/* One line of text, made safe to send: NUL and bare CR become spaces, and a line
 * longer than 998 bytes is cut into several. */
static void put_line(struct corpus_buf *b, const char *p, size_t n)
{
    do {
        size_t k = n > 998 ? 998 : n;
        size_t at = b->len;
        put(b, p, k);
        for (size_t i = at; i < b->len; i++)
            if (b->p[i] == '\0' || b->p[i] == '\r')
                b->p[i] = ' ';
        put(b, "\r\n", 2);
        p += k;
        n -= k;
    } while (n);
}

void corpus_prepare(const char *raw, size_t len, int mboxrd, struct corpus_buf *hdr, struct corpus_buf *body)
{
    hdr->len = body->len = 0;
    size_t i = 0;
    int in_body = 0, keep = 0;
    while (i < len) {
        const char *nl = memchr(raw + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - raw) : len, n = end - i;
        const char *l = raw + i;
        if (n && l[n - 1] == '\r')
            n--;
        i = nl ? end + 1 : len;
        if (!in_body) {
            if (!n) {
                in_body = 1;
                continue;
            }
            if (l[0] == ' ' || l[0] == '\t') {   /* a continuation goes with its header */
                if (keep && hdr->len + n + 2 <= CORPUS_MAX_HDR && n <= 998)
                    put_line(hdr, l, n);
                continue;
            }
            keep = !dropped(l, n) && n <= 998 && hdr->len + n + 2 <= CORPUS_MAX_HDR;
            if (keep)
                put_line(hdr, l, n);
            continue;
        }
        if (mboxrd && n > 5 && l[0] == '>') {   /* mboxrd: >From , >>From  ... lose one '>' */
            size_t k = 0;
            while (k < n && l[k] == '>')
                k++;
            if (n - k >= 5 && !memcmp(l + k, "From ", 5)) {
                l++;
                n--;
            }
        }
        put_line(body, l, n);
    }
    /* the empty line before an mbox's next "From " is the format's, not the message's */
    if (mboxrd && body->len >= 4 && !memcmp(body->p + body->len - 4, "\r\n\r\n", 4))
        body->len -= 2;
    if (!body->len)
        put(body, "\r\n", 2);
}
