/* db: the database's own counters through its client library (libpq, libmariadb), one
 * query per reading on a connection of our own. What each counter is, per kind, is in
 * probe/db.h. */
#include "probe/db.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>
#include <mysql.h>

#include "lib/alloc.h"

/* A PostgreSQL lock wait: the backend and when its wait began (pg_locks.waitstart, or
 * "" for the instant before the server sets it). */
struct pg_wait {
    int pid;
    char start[40];
};

struct dbmon {
    enum probe_db_kind kind;
    char *conninfo;                 /* pgsql */
    struct db_mysql_params my;      /* mysql */
    PGconn *pg;
    MYSQL *mysql;
    struct pg_wait *waits;          /* seen at the last reading */
    size_t nwaits;
    struct probe_db last;
};

/* ------------------------------------------------------------------------------ */
/* PostgreSQL */

/* Our own backend is left out of the connections; waits are listed as
 * "pid:waitstart" items, comma-separated (a timestamp holds a space), to be told apart
 * from one reading to the next. */
static const char pg_query[] =
    "SELECT (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
    "AND pid <> pg_backend_pid()), "
    "current_setting('max_connections')::bigint - current_setting('superuser_reserved_connections')::bigint, "
    "(SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'), "
    "(SELECT coalesce(sum(deadlocks), 0) FROM pg_stat_database), "
    "(SELECT coalesce(sum(xact_rollback), 0) FROM pg_stat_database), "
    "(SELECT coalesce(string_agg(DISTINCT pid || ':' || coalesce(waitstart::text, ''), ','), '') "
    "FROM pg_locks WHERE NOT granted)";

static int pg_connect(struct dbmon *m, char *why, size_t whylen)
{
    if (m->pg && PQstatus(m->pg) == CONNECTION_OK)
        return 0;
    if (m->pg)
        PQfinish(m->pg);
    m->pg = NULL;
    /* The connection's bounds: 2 s to connect, 2 s per query, and a name that says who
     * we are in pg_stat_activity. */
    const char *keys[] = { "dbname", "connect_timeout", "options", "application_name", NULL };
    const char *vals[] = { m->conninfo, "2", "-c statement_timeout=2000", "mailsoak", NULL };
    m->pg = PQconnectdbParams(keys, vals, 1);
    if (!m->pg || PQstatus(m->pg) != CONNECTION_OK) {
        const char *e = m->pg ? PQerrorMessage(m->pg) : "out of memory";
        snprintf(why, whylen, "%.*s", (int)strcspn(e, "\n"), e);
        return -1;
    }
    /* Planned once: the plan was a third of the server's time per reading. */
    PGresult *r = PQprepare(m->pg, "mailsoak_counters", pg_query, 0, NULL);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok) {
        const char *e = PQresultErrorMessage(r);
        snprintf(why, whylen, "%.*s", (int)strcspn(e, "\n"), e);
    }
    PQclear(r);
    if (!ok) {
        PQfinish(m->pg);
        m->pg = NULL;
        return -1;
    }
    return 0;
}

static uint64_t u64(const char *s)
{
    return s ? strtoull(s, NULL, 10) : 0;
}

/* Waits in this reading that were not in the last one. */
static uint64_t pg_new_waits(struct dbmon *m, const char *list)
{
    struct pg_wait *now = NULL;
    size_t n = 0, cap = 0;
    uint64_t fresh = 0;
    for (const char *p = list; *p;) {
        while (*p == ',')
            p++;
        size_t len = strcspn(p, ",");
        if (!len)
            break;
        struct pg_wait w = { 0 };
        w.pid = atoi(p);
        const char *colon = memchr(p, ':', len);
        if (colon)
            snprintf(w.start, sizeof w.start, "%.*s", (int)(len - (size_t)(colon + 1 - p)), colon + 1);
        p += len;
        int seen = 0;
        for (size_t i = 0; i < m->nwaits && !seen; i++)
            seen = m->waits[i].pid == w.pid &&
                   (!*m->waits[i].start || !*w.start || !strcmp(m->waits[i].start, w.start));
        fresh += !seen;
        now = grow(now, &cap, n, 1, sizeof *now);
        now[n++] = w;
    }
    free(m->waits);
    m->waits = now;
    m->nwaits = n;
    return fresh;
}

static int pg_read(struct dbmon *m, struct probe_db *out, char *why, size_t whylen)
{
    if (pg_connect(m, why, whylen) < 0)
        return -1;
    PGresult *r = PQexecPrepared(m->pg, "mailsoak_counters", 0, NULL, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1 || PQnfields(r) != 6) {
        const char *e = PQresultErrorMessage(r);
        snprintf(why, whylen, "%.*s", (int)strcspn(e, "\n"), *e ? e : "unexpected result");
        PQclear(r);
        return -1;
    }
    out->conns = u64(PQgetvalue(r, 0, 0));
    out->conns_max = u64(PQgetvalue(r, 0, 1));
    out->waiting = u64(PQgetvalue(r, 0, 2));
    out->deadlocks = u64(PQgetvalue(r, 0, 3));
    out->errors = u64(PQgetvalue(r, 0, 4));
    out->lock_waits = m->last.lock_waits + pg_new_waits(m, PQgetvalue(r, 0, 5));
    PQclear(r);
    return 0;
}

/* ------------------------------------------------------------------------------ */
/* MariaDB / MySQL */

int db_parse_mysql(const char *spec, struct db_mysql_params *p, char *err, size_t errlen)
{
    static const struct { const char *key; size_t off, size; } keys[] = {
        { "socket", offsetof(struct db_mysql_params, socket), sizeof p->socket },
        { "host", offsetof(struct db_mysql_params, host), sizeof p->host },
        { "user", offsetof(struct db_mysql_params, user), sizeof p->user },
        { "password", offsetof(struct db_mysql_params, password), sizeof p->password },
        { "database", offsetof(struct db_mysql_params, database), sizeof p->database },
    };
    memset(p, 0, sizeof *p);
    for (const char *s = spec; *s;) {
        while (isspace((unsigned char)*s))
            s++;
        if (!*s)
            break;
        size_t len = strcspn(s, " \t"), klen = strcspn(s, "=");
        if (klen >= len) {
            snprintf(err, errlen, "'%.*s' is not KEY=VALUE (keys: socket, host, port, user, password, database)",
                     (int)len, s);
            return -1;
        }
        const char *v = s + klen + 1;
        size_t vlen = len - klen - 1;
        int found = 0;
        if (klen == 4 && !strncmp(s, "port", 4)) {
            char *end;
            errno = 0;
            unsigned long port = strtoul(v, &end, 10);
            if (errno || end != v + vlen || !vlen || port == 0 || port > 65535) {
                snprintf(err, errlen, "port: '%.*s' is not a port number", (int)vlen, v);
                return -1;
            }
            p->port = (unsigned)port;
            found = 1;
        }
        for (size_t i = 0; !found && i < sizeof keys / sizeof keys[0]; i++) {
            if (strlen(keys[i].key) != klen || strncmp(s, keys[i].key, klen))
                continue;
            if (vlen >= keys[i].size) {
                snprintf(err, errlen, "%s: longer than %zu bytes", keys[i].key, keys[i].size - 1);
                return -1;
            }
            memcpy((char *)p + keys[i].off, v, vlen);
            found = 1;
        }
        if (!found) {
            snprintf(err, errlen, "unknown key '%.*s' (keys: socket, host, port, user, password, database)",
                     (int)klen, s);
            return -1;
        }
        s += len;
    }
    if (!*p->socket && !*p->host) {
        snprintf(err, errlen, "needs socket=PATH or host=HOST");
        return -1;
    }
    return 0;
}

/* Our own connection is one of Threads_connected. */
static const char my_query[] =
    "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN "
    "('THREADS_CONNECTED', 'INNODB_ROW_LOCK_WAITS', 'INNODB_ROW_LOCK_CURRENT_WAITS', 'INNODB_DEADLOCKS', "
    "'HANDLER_ROLLBACK') UNION ALL SELECT 'MAX_CONNECTIONS', @@max_connections";

static void my_why(MYSQL *c, char *why, size_t whylen)
{
    snprintf(why, whylen, "%s", c ? mysql_error(c) : "out of memory");
}

static int my_connect(struct dbmon *m, char *why, size_t whylen)
{
    if (m->mysql)
        return 0;
    MYSQL *c = mysql_init(NULL);
    if (!c) {
        my_why(NULL, why, whylen);
        return -1;
    }
    unsigned timeout = 2;
    mysql_optionsv(c, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
    mysql_optionsv(c, MYSQL_OPT_READ_TIMEOUT, &timeout);
    mysql_optionsv(c, MYSQL_OPT_WRITE_TIMEOUT, &timeout);
    /* No ~/.my.cnf nor /etc/mysql: the spec says everything. */
    const struct db_mysql_params *p = &m->my;
    if (!mysql_real_connect(c, *p->host ? p->host : NULL, *p->user ? p->user : NULL,
                            *p->password ? p->password : NULL, *p->database ? p->database : NULL, p->port,
                            *p->socket ? p->socket : NULL, 0)) {
        my_why(c, why, whylen);
        mysql_close(c);
        return -1;
    }
    m->mysql = c;
    return 0;
}

static int my_read(struct dbmon *m, struct probe_db *out, char *why, size_t whylen)
{
    if (my_connect(m, why, whylen) < 0)
        return -1;
    MYSQL_RES *r = NULL;
    if (mysql_query(m->mysql, my_query) || !(r = mysql_store_result(m->mysql))) {
        my_why(m->mysql, why, whylen);
        mysql_close(m->mysql);
        m->mysql = NULL;
        return -1;
    }
    MYSQL_ROW row;
    int got = 0;
    while ((row = mysql_fetch_row(r))) {
        if (!row[0] || !row[1])
            continue;
        uint64_t v = u64(row[1]);
        got++;
        if (!strcasecmp(row[0], "THREADS_CONNECTED"))
            out->conns = v ? v - 1 : 0;
        else if (!strcasecmp(row[0], "INNODB_ROW_LOCK_WAITS"))
            out->lock_waits = v;
        else if (!strcasecmp(row[0], "INNODB_ROW_LOCK_CURRENT_WAITS"))
            out->waiting = v;
        else if (!strcasecmp(row[0], "INNODB_DEADLOCKS"))
            out->deadlocks = v;
        else if (!strcasecmp(row[0], "HANDLER_ROLLBACK"))
            out->errors = v;
        else if (!strcasecmp(row[0], "MAX_CONNECTIONS"))
            out->conns_max = v;
        else
            got--;
    }
    mysql_free_result(r);
    if (got != 6) {
        snprintf(why, whylen, "the server reported %d of the 6 counters (not InnoDB?)", got);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------ */

struct dbmon *dbmon_new(const char *spec, char *err, size_t errlen)
{
    struct dbmon *m = xcalloc(1, sizeof *m);
    const char *colon = strchr(spec, ':');
    size_t klen = colon ? (size_t)(colon - spec) : 0;
    const char *rest = colon ? colon + 1 : "";
    char why[400] = "";
    if (klen == 6 && !strncmp(spec, "sqlite", 6)) {
        m->kind = DBK_SQLITE;
        return m;
    }
    if (klen == 5 && !strncmp(spec, "pgsql", 5)) {
        m->kind = DBK_PGSQL;
        m->conninfo = xstrdup(rest);
        char *e = NULL;
        PQconninfoOption *o = PQconninfoParse(rest, &e);
        if (!o) {
            snprintf(err, errlen, "server.database: pgsql: %s", e ? e : "cannot parse the connection string");
            PQfreemem(e);
            dbmon_free(m);
            return NULL;
        }
        PQconninfoFree(o);
        if (pg_connect(m, why, sizeof why) == 0)
            return m;
    } else if (klen == 5 && !strncmp(spec, "mysql", 5)) {
        m->kind = DBK_MYSQL;
        if (db_parse_mysql(rest, &m->my, why, sizeof why) < 0) {
            snprintf(err, errlen, "server.database: mysql: %s", why);
            dbmon_free(m);
            return NULL;
        }
        if (my_connect(m, why, sizeof why) == 0)
            return m;
    } else {
        snprintf(err, errlen, "server.database: '%.*s' is not a kind (pgsql:CONNINFO, mysql:KEY=VALUE... or sqlite:PATH)",
                 (int)(klen ? klen : strcspn(spec, " ")), spec);
        dbmon_free(m);
        return NULL;
    }
    /* The client libraries' messages name the server, never the password. */
    snprintf(err, errlen, "server.database: cannot connect to %s: %s", probe_db_kind_name(m->kind), why);
    dbmon_free(m);
    return NULL;
}

enum probe_db_kind dbmon_kind(const struct dbmon *m)
{
    return m ? m->kind : DBK_NONE;
}

int dbmon_read(struct dbmon *m, struct probe_db *out, char *why, size_t whylen)
{
    struct probe_db now = m->last;
    int rc = 0;
    if (m->kind == DBK_PGSQL)
        rc = pg_read(m, &now, why, whylen);
    else if (m->kind == DBK_MYSQL)
        rc = my_read(m, &now, why, whylen);
    if (rc < 0) {
        m->last.unreadable++;
        *out = m->last;
        return -1;
    }
    m->last = now;
    *out = now;
    return 0;
}

void dbmon_free(struct dbmon *m)
{
    if (!m)
        return;
    if (m->pg)
        PQfinish(m->pg);
    if (m->mysql)
        mysql_close(m->mysql);
    free(m->conninfo);
    free(m->waits);
    free(m);
}
