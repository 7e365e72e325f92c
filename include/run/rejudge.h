/* rejudge: the verdict and the gates of a result file judged again from its own
 * figures, as a run judges itself (verdict/gate.h, verdict/verdict.h): for a merged
 * file of shards (cmd/merge.c), whose summed outcomes, summed histograms and
 * lined-up timeline no shard's verdict saw. A shard's 1 loss in 150 passes the
 * proven gate (99 %); the load's 4 in 300 does not. */
#ifndef MS_RUN_REJUDGE_H
#define MS_RUN_REJUDGE_H

#include <stdio.h>

#include <jansson.h>

/* Judges root (a result file's JSON) with the [gate] settings its "config" holds:
 * its counts and ledger outcomes from "summary", the latencies from their histogram
 * buckets, the session attempts and the send window (the entries in which a shard
 * sent) from "timeline". Sets root's "verdict", prints the verdict's lines to table
 * (when not NULL), and returns the gates' exit status (lib/exitcodes.h); -1 with
 * the reason in err when the file lacks what the gates need (a file of an older
 * mailsoak: no histogram buckets, no gate settings). */
int rejudge_result(json_t *root, FILE *table, char *err, size_t errlen);

#endif
