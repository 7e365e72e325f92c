/* fuzz_printable: the filter every server text passes before a person or a JSON
 * parser sees it. Its promises are checked on every input: valid UTF-8 (jansson
 * takes it), no control byte, never longer than asked, unchanged when applied to
 * its own output; and utf8_cut never cuts inside a well-formed character. */
#include "fuzz.h"

#include <jansson.h>

#include "lib/printable.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char out[160], again[160];
    size_t cap = size ? 1 + data[0] % sizeof out : sizeof out;
    size_t n = printable(out, cap, data, size);
    if (n >= cap || strlen(out) != n)
        abort();
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)out[i];
        if (c < 0x20 || c == 0x7f || (c == 0xc2 && i + 1 < n && (unsigned char)out[i + 1] < 0xa0))
            abort();
    }
    json_t *j = json_string(out);
    if (!j)
        abort();
    json_decref(j);
    if (printable(again, sizeof again, out, n) != n || memcmp(out, again, n))
        abort();
    size_t max = size ? data[size - 1] : 0;
    size_t c = utf8_cut((const char *)data, size, max);
    if (c > size || c > max || (size > max && c + 3 < max))
        abort();
    return 0;
}
