/* fuzz_units: the value parsers of configuration files and flags (durations,
 * counts, byte sizes, ranges, booleans, numbers). */
#include "fuzz.h"

#include "lib/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    const char *err;
    uint64_t v;
    struct range r;
    int b;
    double d;
    char buf[32];
    if (parse_duration_ns(s, &v, &err) == 0)
        fmt_duration(buf, sizeof buf, v);
    if (parse_count(s, &v, &err) == 0)
        fmt_count(buf, sizeof buf, (double)v);
    if (parse_bytes(s, &v, &err) == 0)
        fmt_bytes(buf, sizeof buf, (double)v);
    if (parse_range(s, &r, 0, &err) == 0 && r.lo > r.hi)
        abort();
    if (parse_range(s, &r, 1, &err) == 0 && r.lo > r.hi)
        abort();
    (void)parse_bool(s, &b, &err);
    (void)parse_double(s, &d, &err);
    free(s);
    return 0;
}
