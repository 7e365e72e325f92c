/* fuzz_wire: what a run reads from a probe over HTTP (probe/wire.c): a /samples
 * response decoded twice into one puller's state (the second as its next pull,
 * the same samples again), and /time's reading. A response is untrusted: a
 * refusal says why, and nothing it holds may overrun the puller. */
#include "fuzz.h"

#include "probe/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct wire_state w = { .examples = 2 };
    char err[300];
    for (int pull = 0; pull < 2; pull++) {
        err[0] = 0;
        if (wire_decode(&w, (const char *)data, size, err, sizeof err) < 0 && !err[0])
            abort();                 /* a refusal says why */
    }
    wire_state_free(&w);
    uint64_t now;
    (void)wire_time_decode((const char *)data, size, &now);
    return 0;
}
