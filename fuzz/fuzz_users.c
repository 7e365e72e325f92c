/* fuzz_users: a users file ("address password" per line, rabid's format), as both
 * mailsoak and mailsoak-server read it. */
#include "fuzz.h"

#include "lib/users.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[400];
    struct users u = { 0 };
    int fd = fuzz_file(data, size, path, sizeof path);
    if (users_load_file(&u, path, err, sizeof err) == 0)
        for (size_t i = 0; i < u.n; i++)
            if (users_find(&u, u.v[i].addr) < 0)
                abort();
    users_free(&u);
    close(fd);
    return 0;
}
