/* ladder: the size ladder (smtp.size_dist = ladder). Whole-message sizes (headers
 * and body, as SIZE counts them: RFC 1870) doubling from 1 KiB while within the
 * limit the server advertised in its EHLO, the limit itself, then the first doubling
 * past it; without a SIZE, doubling up to smtp.ladder_max. smtp.ladder_count messages
 * of each, in order; what each rung became is read from the ledger at the end. */
#ifndef MS_LADDER_H
#define MS_LADDER_H

#include <stddef.h>
#include <stdint.h>

#define LADDER_BASE 1024u
#define LADDER_RUNGS_MAX 48
/* A message's body is its rung minus its headers (about 500 bytes): a rung within
 * this of the one below would not tell its messages apart, so the limit's own rung
 * is left out then. */
#define LADDER_SLACK 4096u

/* The rungs for an advertised limit (0: none, then up to max), ascending; their number. */
unsigned ladder_rungs(uint64_t limit, uint64_t max, uint64_t out[LADDER_RUNGS_MAX]);
/* The rung of a message whose body is body bytes: the first rung at least that,
 * within LADDER_SLACK of it; -1 when none is. */
int ladder_rung_of(const uint64_t *rungs, unsigned n, uint64_t body);

#endif
