/* result_copy: the live run's figures the writers print, copied into the result
 * at the run's end (include/run/result_copy.h): its ids and clock, its users, the
 * ledger's counts, this host's name and the server side's snapshot. */
#include "run/result_copy.h"

#include <string.h>
#include <unistd.h>

void result_copy_run(struct run_result *res, const struct run *r, struct sources *src)
{
    memcpy(res->run_id, r->run_id, sizeof res->run_id);
    res->seed = r->seed;
    res->start_unix_ms = r->t0_unix_ms;
    res->users = r->users.n;
    res->users_total = r->users_total;
    memcpy(res->imap_users, r->imap_users, sizeof res->imap_users);
    res->swept = r->ledger.swept;
    res->ledger_compacted = r->ledger.settled;
    res->ledger_revived = r->ledger.nrevived;
    memset(res->host, 0, sizeof res->host);
    gethostname(res->host, sizeof res->host - 1);
    run_result_free_server(res);
    sources_snapshot(src, &res->server);
}
