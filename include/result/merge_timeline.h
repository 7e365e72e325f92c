/* merge_timeline: the merged timeline (merge_timeline.c: the timelines lined up on
 * the wall clock), for merge.c. Internal to merge: other code uses result/merge.h. */
#ifndef MS_MERGE_TIMELINE_H
#define MS_MERGE_TIMELINE_H

#include <stddef.h>

#include <jansson.h>

#include "result/merge_sum.h"

/* The merged timeline (m's inputs with their offsets and the interval known), or
 * NULL with the reason in m->err. */
json_t *merge_timeline(struct merge *m);

#endif
