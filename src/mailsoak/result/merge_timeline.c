/* merge_timeline: the shards' timelines lined up on the wall clock: every entry goes
 * to the bin of the merged interval its end is nearest to; within a bin a run's
 * counts add up and its levels keep their last value, then the runs add up. */
#include "result/merge_timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "result/latency.h"
#include "lib/alloc.h"
#include "lib/json.h"

/* Timeline values that are levels at the end of an interval rather than counts over
 * it: within one run the last value of a bin stands; over runs they add up. */
static const char *const level_keys[] = { "conns", "server/mem", "server/mem_pss", "server/spool",
                                          "server/store_messages", "server/store_bytes", "server/procs", NULL };

struct point {
    long long bin;
    size_t in, idx;
    double t, dur;                   /* end on the merged clock; length of its interval */
};

static int cmp_point(const void *a, const void *b)
{
    const struct point *x = a, *y = b;
    if (x->bin != y->bin)
        return x->bin < y->bin ? -1 : 1;
    if (x->in != y->in)
        return x->in < y->in ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Sets the value at a '/'-path of o, when o has the objects on the way. */
static void set_path(json_t *o, const char *path, json_t *v)
{
    const char *slash = strchr(path, '/');
    if (!slash) {
        json_object_set_new(o, path, v);
        return;
    }
    char head[64];
    snprintf(head, sizeof head, "%.*s", (int)(slash - path), path);
    json_t *sub = json_object_get(o, head);
    if (!json_is_object(sub)) {
        json_decref(v);
        return;                      /* the entry has no such part: nothing to set */
    }
    set_path(sub, slash + 1, v);
}

/* One run's entries in one bin as one entry: counts added, levels the last. */
static json_t *run_in_bin(const struct merge *m, const struct point *p, size_t n)
{
    const struct input *in = &m->in[p[0].in];
    json_t **v = xcalloc(n, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        v[i] = json_deep_copy(json_array_get(in->r->timeline, p[i].idx));
        json_object_del(v[i], "t");
        json_object_del(v[i], "phase");
        json_object_del(v[i], "latency");
        json_object_del(v[i], "rate_in");
        json_object_del(v[i], "rate_out");
        if (!in->server)
            json_object_del(v[i], "server");
    }
    int conflict = 0;
    json_t *out = merge_combine(v, n, &conflict);
    for (const char *const *k = level_keys; *k; k++) {
        const json_t *last = json_path_get(v[n - 1], *k);
        if (json_path_get(out, *k))
            set_path(out, *k, last ? json_deep_copy(last) : json_null());
    }
    for (size_t i = 0; i < n; i++)
        json_decref(v[i]);
    free(v);
    return json_is_object(out) ? out : (json_decref(out), json_object());
}

static json_t *merge_bin(struct merge *m, const struct point *p, size_t n, int *fail)
{
    json_t **runs = xcalloc(n, sizeof *runs);
    json_t *phases = json_array();
    struct lat_sum ls = { .names = json_object() };
    size_t nr = 0;
    double t = 0, rate_in = 0, rate_out = 0;
    for (size_t a = 0, b; a < n; a = b) {
        double dur = 0;
        for (b = a; b < n && p[b].in == p[a].in; b++) {
            const json_t *e = json_array_get(m->in[p[b].in].r->timeline, p[b].idx);
            const json_t *lat = json_object_get(e, "latency");
            if (lat && lat_sum_add(&ls, lat, m->in[p[b].in].r->path, m->err, m->errlen) < 0)
                *fail = 1;
            dur += p[b].dur;
            t = fmax(t, p[b].t);
        }
        json_t *r = runs[nr++] = run_in_bin(m, p + a, b - a);
        /* rates of runs side by side add up; each run's own over its own intervals */
        if (dur > 0) {
            rate_in += json_path_number_or(r, "sent", 0) / dur;
            rate_out += json_path_number_or(r, "read", 0) / dur;
        }
        const json_t *ph = json_object_get(json_array_get(m->in[p[b - 1].in].r->timeline, p[b - 1].idx), "phase");
        size_t i;
        const json_t *x;
        int seen = 0;
        json_array_foreach(phases, i, x)
            seen |= json_equal(x, ph);
        if (json_is_string(ph) && !seen)
            json_array_append(phases, (json_t *)ph);
    }
    int conflict = 0;
    json_t *sum = merge_combine(runs, nr, &conflict);
    json_t *e = json_object();
    json_object_set_new(e, "t", json_real(round(t * 1000) / 1000));
    /* shards in different phases at once: all of them, "send+drain" */
    char phase[64] = "";
    size_t i;
    const json_t *x;
    json_array_foreach(phases, i, x)
        snprintf(phase + strlen(phase), sizeof phase - strlen(phase), "%s%s", i ? "+" : "", json_string_value(x));
    json_object_set_new(e, "phase", json_string(phase));
    json_object_update(e, sum);
    json_object_set_new(e, "rate_in", json_real(rate_in));
    json_object_set_new(e, "rate_out", json_real(rate_out));
    json_object_set_new(e, "latency", lat_sum_json(&ls));
    json_decref(sum);
    json_decref(phases);
    lat_sum_free(&ls);
    for (size_t k = 0; k < nr; k++)
        json_decref(runs[k]);
    free(runs);
    return e;
}

/* Every entry goes to the bin of the merged interval its end is nearest to, so runs
 * started a little apart (less than half an interval) line up entry for entry. */
json_t *merge_timeline(struct merge *m)
{
    size_t total = 0;
    for (size_t i = 0; i < m->n; i++)
        total += m->in[i].r->timeline ? json_array_size(m->in[i].r->timeline) : 0;
    struct point *p = xcalloc(total, sizeof *p);
    size_t np = 0;
    for (size_t i = 0; i < m->n; i++) {
        double prev = 0;
        size_t j;
        const json_t *e;
        json_array_foreach(m->in[i].r->timeline, j, e) {
            double t;
            if (json_path_number(e, "t", &t) < 0 || !isfinite(t) || t < 0 || t > 1e9) {
                merge_warn(m, "%s: timeline entry %zu has no usable t: left out", m->in[i].r->path, j);
                continue;
            }
            double tm = t + m->in[i].off;
            p[np++] = (struct point){ .bin = llround(tm / m->iv), .in = i, .idx = j, .t = tm,
                                      .dur = t > prev ? t - prev : 0 };
            prev = t;
        }
    }
    qsort(p, np, sizeof *p, cmp_point);
    json_t *tl = json_array();
    int fail = 0;
    for (size_t a = 0, b; a < np && !fail; a = b) {
        for (b = a; b < np && p[b].bin == p[a].bin; b++)
            ;
        json_array_append_new(tl, merge_bin(m, p + a, b - a, &fail));
    }
    free(p);
    if (fail) {
        json_decref(tl);
        return NULL;
    }
    return tl;
}
