/* fuzz.h: what the libFuzzer targets (fuzz/fuzz_*.c, `make fuzz`) share: the entry
 * point's prototype, the input cut into NUL-terminated lines as conn_line() hands
 * them over, and the input as a file for the parsers that read paths. */
#ifndef MS_FUZZ_H
#define MS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Calls fn on each line of data (split at LF, a CR before it dropped), each in a
 * buffer of its own, exactly as long as the line plus a NUL, so a read past it is
 * caught by ASan. */
static inline void fuzz_lines(const uint8_t *data, size_t size, void (*fn)(char *line, size_t len, void *arg),
                              void *arg)
{
    size_t i = 0;
    while (i < size) {
        const uint8_t *nl = memchr(data + i, '\n', size - i);
        size_t end = nl ? (size_t)(nl - data) : size;
        size_t len = end - i;
        if (len && data[i + len - 1] == '\r')
            len--;
        char *line = malloc(len + 1);
        if (!line)
            abort();
        memcpy(line, data + i, len);
        line[len] = 0;
        fn(line, len, arg);
        free(line);
        i = end + 1;
    }
}

/* The input as a NUL-terminated string of its own. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = 0;
    return s;
}

/* The input as a file (in memory) for parsers that take a path: writes it to a
 * memfd and gives "/proc/self/fd/N". Close fd when done. */
static inline int fuzz_file(const uint8_t *data, size_t size, char *path, size_t pathlen)
{
    int fd = memfd_create("fuzz", MFD_CLOEXEC);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
        abort();
    snprintf(path, pathlen, "/proc/self/fd/%d", fd);
    return fd;
}

#endif
