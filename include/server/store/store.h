/* store: the mail stores behind the reference server. Backends are plain
 * synchronous function tables; one store thread runs every call, so backends need
 * no locks and SQLite gets the single writer it requires. The event loop submits
 * requests and gets completions back through an eventfd, never blocking on disk. */
#ifndef MS_SERVER_STORE_H
#define MS_SERVER_STORE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/conn.h"
#include "lib/loop.h"
#include "server/config.h"

/* One message of a mailbox as a POP3 session sees it. */
struct srv_item {
    char uid[72];
    uint64_t size;                   /* octets as RETR sends them (CRLF line ends) */
    uint64_t key, off, len;          /* backend's handles: row id, index, offsets */
    char *path;                      /* backend's handle: file name (maildir) */
};

struct srv_items {
    struct srv_item *v;
    size_t n, cap;
};
void srv_items_add(struct srv_items *l, const struct srv_item *it);
void srv_items_free(struct srv_items *l);

struct srv_backend;

/* What every backend provides. All but init/fini run on the store thread, one at a
 * time. err gets a line in the style of the real server it imitates. */
struct srv_backend_ops {
    const char *name;
    int (*init)(struct srv_backend *b, char *err, size_t errlen);
    void (*fini)(struct srv_backend *b);
    /* Optional: a batch of requests runs between begin and end; a failing end fails
     * every write of the batch (SQLite commits a batch as one transaction). */
    int (*begin)(struct srv_backend *b, char *err, size_t errlen);
    int (*end)(struct srv_backend *b, char *err, size_t errlen);
    int (*deliver)(struct srv_backend *b, size_t user, const char *uid, const char *data,
                   size_t len, char *err, size_t errlen);
    int (*list)(struct srv_backend *b, size_t user, struct srv_items *out, char *err, size_t errlen);
    /* Appends the message's bytes as stored (line ends as received) to out. */
    int (*fetch)(struct srv_backend *b, size_t user, const struct srv_item *it, struct buf *out,
                 char *err, size_t errlen);
    int (*expunge)(struct srv_backend *b, size_t user, const struct srv_item *const *its, size_t n,
                   char *err, size_t errlen);
};

struct srv_backend {
    const struct srv_backend_ops *ops;
    const struct users *users;
    const char *dir;
    int fsync;
    void *priv;
};

const struct srv_backend_ops *srv_backend_by_kind(int kind);

/* SOP_OPEN/COMMIT/CLOSE are POP3's locked session; SOP_LIST and SOP_EXPUNGE are
 * IMAP's, which shares a mailbox between sessions and takes no lock. */
enum srv_op { SOP_DELIVER, SOP_OPEN, SOP_FETCH, SOP_COMMIT, SOP_CLOSE, SOP_LIST, SOP_EXPUNGE, SOP_COUNT };

enum srv_status {
    SS_OK = 0,
    SS_TEMP,                         /* try again later (SMTP 451, POP3 [SYS/TEMP]) */
    SS_IN_USE,                       /* mailbox locked (POP3 [IN-USE], SMTP 451 4.2.0) */
    SS_PERM,                         /* a bug or a broken store ([SYS/PERM]) */
};

struct srv_req;
typedef void (*srv_req_done)(struct srv_req *r);

/* A request travels loop -> store thread -> loop; the submitter owns it again when
 * done() runs on the loop thread. */
struct srv_req {
    struct srv_req *next;
    enum srv_op op;
    enum srv_status status;
    char err[256];                   /* the log-style reason when status != SS_OK */
    srv_req_done done;
    void *ud;
    /* SOP_DELIVER: one copy per recipient; data is the message as received. */
    size_t *rcpts, nrcpts;
    const char *data;
    size_t len;
    char qid[32];                    /* filled: the queue id for "250 Ok: queued as" */
    /* SOP_OPEN, SOP_LIST, SOP_FETCH, SOP_COMMIT, SOP_EXPUNGE, SOP_CLOSE: the mailbox */
    size_t user;
    struct srv_items items;          /* filled by OPEN and LIST; read by FETCH/COMMIT */
    uint64_t xgen;                   /* the mailbox's expunge count when items were listed:
                                        a FETCH on an older listing finds its item again
                                        (an mbox's offsets move when another session expunges) */
    const struct srv_item *item;     /* SOP_FETCH */
    struct buf out;                  /* filled by FETCH */
    const struct srv_item **del;     /* SOP_COMMIT, SOP_EXPUNGE: items to remove */
    size_t ndel;
    int imap;                        /* an IMAP session's: log lines in imap's words */
};

struct srv_store;
/* Starts the backend and its thread; completions run on loop l. */
struct srv_store *srv_store_start(const struct srv_config *cfg, const struct users *u,
                                  struct loop *l, char *err, size_t errlen);
void srv_store_submit(struct srv_store *s, struct srv_req *r);
/* fn(ud, user) runs on the loop thread for each recipient of a delivery the store
 * accepted, before the deliverer hears of it: IMAP pushes EXISTS from it. */
void srv_store_watch(struct srv_store *s, void (*fn)(void *ud, size_t user), void *ud);
/* Stops the thread after it finished what was queued, and closes the backend. */
void srv_store_stop(struct srv_store *s);

/* Backend helpers shared by the file stores. */
/* Octets of data once every line ends in CRLF. */
uint64_t srv_crlf_size(const char *p, size_t n);
/* mkdir -p */
int srv_mkdirs(const char *path, char *err, size_t errlen);
/* Writes all of p to fd (retrying short writes); -1 with errno. */
int srv_write_all(int fd, const void *p, size_t n);
/* One syncfs() of the filesystem holding dir, through fd, a descriptor of dir the
 * backend keeps open from its init (so a process out of descriptors can still
 * commit): the group commit of a batch. */
int srv_syncfs(int fd, const char *dir, char *err, size_t errlen);
/* dir opened for srv_syncfs; -1 with "open(DIR) failed: ..." in err. */
int srv_open_dir(const char *dir, char *err, size_t errlen);
/* fsyncs a directory so a rename in it survives a crash. */
int srv_fsync_dir(const char *path);

#endif
