/* Unit tests of probe/db.c without a database: the MariaDB spec's parser takes the keys
 * it names and refuses everything else with the word at fault; a spec of no known kind,
 * or a PostgreSQL connection string libpq cannot parse, is refused before any connection
 * is tried; an SQLite spec opens nothing (its counters come from the logs). The
 * counters against a live server are checked by t_db_pgsql.sh and t_db_mysql.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "probe/db.h"

static void mysql_spec(void **state)
{
    struct db_mysql_params p;
    char err[200];
    assert_int_equal(db_parse_mysql("socket=/tmp/tb/run/db/mysqld.sock user=mailsoak password=s3cret", &p, err,
                                    sizeof err), 0);
    assert_string_equal(p.socket, "/tmp/tb/run/db/mysqld.sock");
    assert_string_equal(p.user, "mailsoak");
    assert_string_equal(p.password, "s3cret");
    assert_string_equal(p.host, "");
    assert_int_equal(p.port, 0);
    assert_int_equal(db_parse_mysql("  host=db1\tport=3307 database=mail ", &p, err, sizeof err), 0);
    assert_string_equal(p.host, "db1");
    assert_int_equal(p.port, 3307);
    assert_string_equal(p.database, "mail");

    assert_int_equal(db_parse_mysql("user=x", &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "socket=PATH or host=HOST"));
    assert_int_equal(db_parse_mysql("host=a prot=1", &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "unknown key 'prot'"));
    assert_int_equal(db_parse_mysql("host=a port=65536", &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "port"));
    assert_int_equal(db_parse_mysql("host=a port=1x", &p, err, sizeof err), -1);
    assert_int_equal(db_parse_mysql("host=a socket", &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "'socket' is not KEY=VALUE"));
    char big[400];
    memset(big, 'u', sizeof big);
    memcpy(big, "host=a user=", 12);
    big[sizeof big - 1] = 0;
    assert_int_equal(db_parse_mysql(big, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "user: longer than"));
}

static void specs_refused_before_connecting(void **state)
{
    char err[300];
    assert_null(dbmon_new("oracle:x", err, sizeof err));
    assert_non_null(strstr(err, "server.database: 'oracle' is not a kind"));
    assert_null(dbmon_new("/var/lib/x.db", err, sizeof err));
    assert_non_null(strstr(err, "is not a kind"));
    assert_null(dbmon_new("pgsql:host='unterminated", err, sizeof err));
    assert_non_null(strstr(err, "server.database: pgsql:"));
    assert_null(dbmon_new("mysql:port=1", err, sizeof err));
    assert_non_null(strstr(err, "server.database: mysql: needs socket=PATH"));
    /* the password never shows in a refusal */
    assert_null(dbmon_new("mysql:socket=/nonexistent/mysqld.sock user=u password=hunter2", err, sizeof err));
    assert_non_null(strstr(err, "cannot connect to mysql"));
    assert_null(strstr(err, "hunter2"));
    struct dbmon *m = dbmon_new("sqlite:/nonexistent.db", err, sizeof err);
    assert_non_null(m);
    assert_int_equal(dbmon_kind(m), DBK_SQLITE);
    dbmon_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mysql_spec),
        cmocka_unit_test(specs_refused_before_connecting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
