/* fuzz_store: the store walker's mbox count on files the server (and the mail in
 * them, anyone's) wrote: read in bounded pieces, Content-Length jumps and the
 * search for dated separators across pieces. The first byte says how the file
 * changed since its size was taken: as it is, grown (the count stops at the old
 * size) or shrunk (the reads end early). */
#include "fuzz.h"

#include "probe/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    char path[64];
    int fd = fuzz_file(data + 1, size - 1, path, sizeof path);
    off_t n = (off_t)(size - 1), told = data[0] % 3 == 0 ? n : data[0] % 3 == 1 ? n / 2 : n + 70000;
    int err;
    uint64_t count = store_mbox_count(fd, told, &err);
    /* a message needs its "From " line: never more messages than there are lines */
    if (err || count > (uint64_t)n / 5 + 1)
        abort();
    close(fd);
    return 0;
}
