/* fuzz_config: a configuration file, through inih and every key's value parser
 * (the table of settings/config.c), as `mailsoak run -c FILE` reads it. */
#include "fuzz.h"

#include "settings/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[600];
    struct config cfg;
    int fd = fuzz_file(data, size, path, sizeof path);
    memset(&cfg, 0, sizeof cfg);
    if (opts_defaults(config_opts, &cfg, err, sizeof err) < 0)
        abort();
    (void)opts_load_file(config_opts, &cfg, path, 1, err, sizeof err);
    opts_free(config_opts, &cfg);
    close(fd);
    return 0;
}
