/* fuzz_msg: message checking as a reader does it on a retrieved message: the lines
 * of a RETR, dot-unstuffed, through msg_check (our headers: run id, sequence and
 * recipient count, digest). */
#include "fuzz.h"

#include "engine/msg.h"

static void line(char *l, size_t len, void *arg)
{
    if (len && l[0] == '.') {
        l++;
        len--;
    }
    msg_check_line(arg, l, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static EVP_MD *sha256;
    static EVP_MD_CTX *md;
    if (!sha256) {
        sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
        md = EVP_MD_CTX_new();
    }
    struct msg_check m;
    msg_check_begin(&m, md, sha256);
    fuzz_lines(data, size, line, &m);
    enum msg_result v = msg_check_end(&m);
    if (v == MSG_OK && (!m.have_id || !m.have_digest || m.nrcpt < 1 || m.nrcpt > 64))
        abort();
    return 0;
}
