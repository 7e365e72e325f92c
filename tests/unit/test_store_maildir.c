/* test_store_maildir: the maildir backend's group commit (server/store/store_maildir.c)
 * keeps the contract of a backend's end (server/store/store.h): a failing end fails
 * every write of the batch, so none of them may be in a mailbox. A batch whose
 * second rename fails is taken back whole: the message renamed into new/ before it
 * goes too, and no tmp file stays. Before, that message stayed in new/ while its
 * sender was told 451: delivered and refused at once (a retrying MTA duplicates
 * it; mailsoak counted such mail 'unconfirmed'). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/users.h"
#include "server/store/store_maildir.h"
#include "tmpdir.h"

/* Files in DIR/ADDRESS/SUB (-1: no such directory). */
static int files_in(const char *dir, const char *addr, const char *sub)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s/%s", dir, addr, sub);
    DIR *d = opendir(p);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void rm_tree(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void a_failed_commit_delivers_nothing(void **state)
{
    (void)state;
    char dir[256], err[400], p[4200];
    test_tmpname(dir, sizeof dir, "test_store_maildir.XXXXXX");
    assert_non_null(mkdtemp(dir));
    struct users u;
    assert_int_equal(users_from_pattern(&u, "user%d@test.local", "pw", 2, err, sizeof err), 0);
    struct srv_backend b = { .ops = &srv_store_maildir, .users = &u, .dir = dir, .fsync = 1 };
    assert_int_equal(b.ops->init(&b, err, sizeof err), 0);
    static const char msg[] = "Subject: t\r\n\r\nbody\r\n";
    assert_int_equal(b.ops->deliver(&b, 0, "1.M1P1", msg, sizeof msg - 1, err, sizeof err), 0);
    assert_int_equal(b.ops->deliver(&b, 1, "1.M2P1", msg, sizeof msg - 1, err, sizeof err), 0);
    /* the second rename of the commit fails: its new/ is gone */
    snprintf(p, sizeof p, "%s/%s/new", dir, u.v[1].addr);
    assert_int_equal(rmdir(p), 0);
    assert_int_equal(b.ops->end(&b, err, sizeof err), -1);
    assert_non_null(strstr(err, "rename("));
    assert_int_equal(files_in(dir, u.v[0].addr, "new"), 0);
    assert_int_equal(files_in(dir, u.v[0].addr, "tmp"), 0);
    assert_int_equal(files_in(dir, u.v[1].addr, "tmp"), 0);
    /* and a batch that commits still delivers */
    assert_int_equal(b.ops->deliver(&b, 0, "1.M3P1", msg, sizeof msg - 1, err, sizeof err), 0);
    assert_int_equal(b.ops->end(&b, err, sizeof err), 0);
    assert_int_equal(files_in(dir, u.v[0].addr, "new"), 1);
    b.ops->fini(&b);
    users_free(&u);
    rm_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_failed_commit_delivers_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
