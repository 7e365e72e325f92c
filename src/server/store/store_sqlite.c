/* store_sqlite: every mailbox in one SQLite database (STORE_DIR/mail.sqlite, WAL).
 * Only the store thread touches the connection, so writes are serialized as SQLite
 * requires; each batch of queued requests is one transaction (group commit), and a
 * 250 goes out only after its batch committed. */
#include "server/store/store_sqlite.h"
#include "server/store/store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"

struct sq {
    sqlite3 *db;
    sqlite3_stmt *ins, *list, *fetch, *del;
};

static int fail(struct sq *q, const char *what, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: %s", what, sqlite3_errmsg(q->db));
    return -1;
}

static int sq_init(struct srv_backend *b, char *err, size_t errlen)
{
    struct sq *q = xcalloc(1, sizeof *q);
    char path[4096];
    b->priv = q;
    if (srv_mkdirs(b->dir, err, errlen) < 0)
        goto bad;
    snprintf(path, sizeof path, "%s/mail.sqlite", b->dir);
    if (sqlite3_open_v2(path, &q->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL)) {
        fail(q, path, err, errlen);
        goto bad;
    }
    sqlite3_busy_timeout(q->db, 5000);
    char sql[600];
    snprintf(sql, sizeof sql,
             "PRAGMA journal_mode=WAL; PRAGMA synchronous=%s;"
             "CREATE TABLE IF NOT EXISTS mail (id INTEGER PRIMARY KEY AUTOINCREMENT,"
             " mailbox TEXT NOT NULL, uid TEXT NOT NULL, size INTEGER NOT NULL, body BLOB NOT NULL);"
             "CREATE INDEX IF NOT EXISTS mail_mailbox ON mail (mailbox, id);",
             b->fsync ? "FULL" : "OFF");
    if (sqlite3_exec(q->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
        fail(q, "schema", err, errlen);
        goto bad;
    }
    if (sqlite3_prepare_v2(q->db, "INSERT INTO mail (mailbox, uid, size, body) VALUES (?, ?, ?, ?)", -1, &q->ins, NULL) ||
        sqlite3_prepare_v2(q->db, "SELECT id, uid, size FROM mail WHERE mailbox = ? ORDER BY id", -1, &q->list, NULL) ||
        sqlite3_prepare_v2(q->db, "SELECT body FROM mail WHERE id = ? AND mailbox = ?", -1, &q->fetch, NULL) ||
        sqlite3_prepare_v2(q->db, "DELETE FROM mail WHERE id = ? AND mailbox = ?", -1, &q->del, NULL)) {
        fail(q, "prepare", err, errlen);
        goto bad;
    }
    return 0;
bad:
    b->ops->fini(b);
    return -1;
}

static void sq_fini(struct srv_backend *b)
{
    struct sq *q = b->priv;
    if (!q)
        return;
    sqlite3_finalize(q->ins);
    sqlite3_finalize(q->list);
    sqlite3_finalize(q->fetch);
    sqlite3_finalize(q->del);
    sqlite3_close(q->db);
    free(q);
    b->priv = NULL;
}

static int sq_begin(struct srv_backend *b, char *err, size_t errlen)
{
    struct sq *q = b->priv;
    if (sqlite3_exec(q->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return fail(q, "BEGIN", err, errlen);
    return 0;
}

static int sq_end(struct srv_backend *b, char *err, size_t errlen)
{
    struct sq *q = b->priv;
    if (sqlite3_exec(q->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        fail(q, "COMMIT", err, errlen);
        sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    return 0;
}

static int sq_deliver(struct srv_backend *b, size_t user, const char *uid, const char *data,
                      size_t len, char *err, size_t errlen)
{
    struct sq *q = b->priv;
    sqlite3_stmt *s = q->ins;
    sqlite3_bind_text(s, 1, b->users->v[user].addr, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, uid, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 3, (sqlite3_int64)srv_crlf_size(data, len));
    sqlite3_bind_blob64(s, 4, data, len, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return rc == SQLITE_DONE ? 0 : fail(q, "INSERT", err, errlen);
}

static int sq_list(struct srv_backend *b, size_t user, struct srv_items *out, char *err, size_t errlen)
{
    struct sq *q = b->priv;
    sqlite3_stmt *s = q->list;
    int rc;
    sqlite3_bind_text(s, 1, b->users->v[user].addr, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct srv_item it = { .key = (uint64_t)sqlite3_column_int64(s, 0),
                               .size = (uint64_t)sqlite3_column_int64(s, 2) };
        snprintf(it.uid, sizeof it.uid, "%s", (const char *)sqlite3_column_text(s, 1));
        srv_items_add(out, &it);
    }
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : fail(q, "SELECT", err, errlen);
}

static int sq_fetch(struct srv_backend *b, size_t user, const struct srv_item *it, struct buf *out,
                    char *err, size_t errlen)
{
    struct sq *q = b->priv;
    sqlite3_stmt *s = q->fetch;
    sqlite3_bind_int64(s, 1, (sqlite3_int64)it->key);
    sqlite3_bind_text(s, 2, b->users->v[user].addr, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        const void *p = sqlite3_column_blob(s, 0);
        buf_append(out, p ? p : "", (size_t)sqlite3_column_bytes(s, 0));
    }
    sqlite3_reset(s);
    if (rc == SQLITE_ROW)
        return 0;
    if (rc == SQLITE_DONE) {
        snprintf(err, errlen, "message %s is gone from the database", it->uid);
        return -1;
    }
    return fail(q, "SELECT", err, errlen);
}

static int sq_expunge(struct srv_backend *b, size_t user, const struct srv_item *const *its, size_t n,
                      char *err, size_t errlen)
{
    struct sq *q = b->priv;
    sqlite3_stmt *s = q->del;
    for (size_t i = 0; i < n; i++) {
        sqlite3_bind_int64(s, 1, (sqlite3_int64)its[i]->key);
        sqlite3_bind_text(s, 2, b->users->v[user].addr, -1, SQLITE_STATIC);
        int rc = sqlite3_step(s);
        sqlite3_reset(s);
        if (rc != SQLITE_DONE)
            return fail(q, "DELETE", err, errlen);
    }
    return 0;
}

const struct srv_backend_ops srv_store_sqlite = {
    .name = "sqlite", .init = sq_init, .fini = sq_fini, .begin = sq_begin, .end = sq_end,
    .deliver = sq_deliver, .list = sq_list, .fetch = sq_fetch, .expunge = sq_expunge,
};
