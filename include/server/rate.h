/* rate: [fault.rate], the reference server's known capacity (rate.c). */
#ifndef MS_SERVER_RATE_H
#define MS_SERVER_RATE_H

#include <stddef.h>

struct srv;
struct srv_rate;

/* [fault.rate] (rate.c), on the loop thread. srv_rate_start: NULL without a limit,
 * or with err set when its spool_dir cannot be opened.
 * srv_rate_admit (over = 451): 1 when a message may be delivered now (it takes a
 * token). srv_rate_enqueue (over = queue): copies the message into the queue, 0,
 * or -1 when the queue is full. srv_rate_stop: before the store stops; what is
 * still queued is dropped (logged), as from the memory of a stopped MTA, and what
 * the store holds completes without retries; srv_rate_free once the store stopped. */
struct srv_rate *srv_rate_start(struct srv *srv, char *err, size_t errlen);
int srv_rate_admit(struct srv_rate *r);
int srv_rate_enqueue(struct srv_rate *r, const size_t *rcpts, size_t nrcpts, const char *data, size_t len,
                     const char *qid);
void srv_rate_stop(struct srv_rate *r);
void srv_rate_free(struct srv_rate *r);

#endif
