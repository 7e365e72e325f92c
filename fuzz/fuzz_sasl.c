/* fuzz_sasl: what the server chooses in an AUTH exchange: a CRAM-MD5 challenge
 * (a "334 ====" once made HMAC read the stack) and the APOP banner's timestamp. */
#include "fuzz.h"

#include "engine/sasl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    char out[700], hex[33];
    if (sasl_cram_md5("user0001@test.local", "secret", s, out, sizeof out) == 0 && strlen(out) >= sizeof out)
        abort();
    if (pop3_apop(s, "secret", hex) == 0 && strlen(hex) != 32)
        abort();
    free(s);
    return 0;
}
