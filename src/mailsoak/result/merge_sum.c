/* merge_sum: what the two halves of merge share (include/result/merge_sum.h): a
 * warning line, and a key's values in several files added up. */
#include "result/merge_sum.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/alloc.h"

void merge_warn(struct merge *m, const char *fmt, ...)
{
    va_list ap;
    if (m->wpos + 1 >= m->warnlen)
        return;
    va_start(ap, fmt);
    int k = vsnprintf(m->warn + m->wpos, m->warnlen - m->wpos - 1, fmt, ap);
    va_end(ap);
    if (k < 0)
        return;
    m->wpos += (size_t)k < m->warnlen - m->wpos - 1 ? (size_t)k : m->warnlen - m->wpos - 2;
    m->warn[m->wpos++] = '\n';
    m->warn[m->wpos] = 0;
}

/* Values of one key in several files, added up: numbers add, objects add key by key
 * (errors by class, log classes), arrays are joined (examples), a flag holds when it
 * holds in every file that has it ("settled" is null where no sweep was needed),
 * anything else is kept when all agree. null ("not measured") is left out; null comes back
 * when nothing was measured or the values cannot be added (then *conflict is set). */
json_t *merge_combine(json_t *const *v, size_t n, int *conflict)
{
    json_t **x = xcalloc(n, sizeof *x);
    size_t k = 0, nint = 0, nnum = 0, nobj = 0, narr = 0, nbool = 0;
    for (size_t i = 0; i < n; i++) {
        if (!v[i] || json_is_null(v[i]))
            continue;
        x[k++] = v[i];
        nint += json_is_integer(v[i]);
        nnum += json_is_number(v[i]);
        nobj += json_is_object(v[i]);
        narr += json_is_array(v[i]);
        nbool += json_is_boolean(v[i]);
    }
    json_t *out;
    if (k == 0)
        out = json_null();
    else if (nint == k) {
        json_int_t s = 0;
        int over = 0;
        for (size_t i = 0; i < k; i++)
            over |= __builtin_add_overflow(s, json_integer_value(x[i]), &s);
        out = over ? json_null() : json_integer(s);
        *conflict |= over;
    } else if (nnum == k) {
        double s = 0;
        for (size_t i = 0; i < k; i++)
            s += json_number_value(x[i]);
        out = json_real(s);
    } else if (nobj == k) {
        out = json_object();
        json_t **sub = xcalloc(k, sizeof *sub);
        for (size_t i = 0; i < k; i++) {
            const char *key;
            json_t *val;
            json_object_foreach(x[i], key, val) {
                if (json_object_get(out, key))
                    continue;
                for (size_t j = 0; j < k; j++)
                    sub[j] = json_object_get(x[j], key);
                json_object_set_new(out, key, merge_combine(sub, k, conflict));
            }
        }
        free(sub);
    } else if (nbool == k) {
        int all = 1;
        for (size_t i = 0; i < k; i++)
            all &= json_is_true(x[i]);
        out = json_boolean(all);
    } else if (narr == k) {
        out = json_array();
        for (size_t i = 0; i < k; i++)
            json_array_extend(out, x[i]);
    } else {
        size_t i = 1;
        while (i < k && json_equal(x[0], x[i]))
            i++;
        if (i == k)
            out = json_deep_copy(x[0]);
        else {
            out = json_null();
            *conflict = 1;
        }
    }
    free(x);
    return out;
}
