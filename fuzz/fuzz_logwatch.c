/* fuzz_logwatch: the log watcher: the first line is a log_class setting
 * ("name: ERE", "name/i: ERE", "name:"), the rest are server log lines matched
 * against it and against the built-in classes (compiled once: they do not change). */
#include "fuzz.h"

#include "probe/logwatch.h"

static struct logwatch *builtin;

static void line(char *l, size_t len, void *arg)
{
    logwatch_feed(arg, l, len, 1);
    logwatch_feed(builtin, l, len, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[300];
    if (!builtin) {
        builtin = logwatch_new(0, 3);
        if (!builtin)
            abort();
        logwatch_add_defaults(builtin);
    }
    const uint8_t *nl = memchr(data, '\n', size);
    size_t first = nl ? (size_t)(nl - data) : size;
    struct logwatch *lw = logwatch_new(0, 3);
    if (!lw)
        abort();
    char *spec = fuzz_string(data, first);
    (void)logwatch_set_class(lw, spec, err, sizeof err);
    free(spec);
    if (nl)
        fuzz_lines(nl + 1, size - first - 1, line, lw);
    logwatch_free(lw);
    return 0;
}
