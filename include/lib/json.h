/* json: the JSON helpers every layer that reads or writes a document uses (over
 * jansson): a value at a '/'-separated path, and a document written atomically. */
#ifndef MS_LIB_JSON_H
#define MS_LIB_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* A number at a '/'-separated path ("latency/delivery/p99"), so keys may contain dots.
 * Returns 0 and sets *out, or -1 when a part is missing or the value is not a number. */
int json_path_number(const json_t *obj, const char *path, double *out);
/* The number at path, or dflt when there is none. */
double json_path_number_or(const json_t *obj, const char *path, double dflt);
/* The count at path: an integer above 0, else 0 (missing, negative, not an integer). */
uint64_t json_path_count(const json_t *obj, const char *path);
const json_t *json_path_get(const json_t *obj, const char *path);

/* Writes JSON to path atomically (temp file in the same directory, fsync, rename):
 * the run's results and merged ones. 0, or -1 with the reason in err. */
int write_json_atomic(const char *path, json_t *root, char *err, size_t errlen);

#endif
