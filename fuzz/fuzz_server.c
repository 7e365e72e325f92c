/* fuzz_server: the reference server's parsers of what clients send: command verbs,
 * MAIL/RCPT paths and parameters, AUTH's base64 and PLAIN, and the DATA receiver
 * (dot-unstuffing, the terminator) fed in two reads split at a chosen byte. */
#include "fuzz.h"

#include "server/proto.h"

static void line(char *l, size_t len, void *arg)
{
    const char *a, *addr, *params, *why, *u, *p;
    size_t alen, ul, pl, dn;
    struct srv_mail_params mp;
    char dec[512];
    (void)arg;
    (void)srv_pop3_verb(l, len, &a);
    enum srv_smtp_verb v = srv_smtp_verb(l, len, &a);
    if (v == SV_MAIL || v == SV_RCPT) {
        if (srv_smtp_path(a, v == SV_MAIL ? "FROM" : "TO", &addr, &alen, &params) == 0)
            (void)srv_mail_params(params, &mp, &why);
    }
    if (srv_b64_decode(l, len, dec, sizeof dec, &dn) == 0)
        (void)srv_sasl_plain(dec, dn, &u, &ul, &p, &pl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_lines(data, size, line, NULL);
    struct srv_data d;
    struct buf out = { 0 };
    srv_data_init(&d, 4096);
    size_t cut = size ? data[0] % (size + 1) : 0;
    size_t used = srv_data_feed(&d, (const char *)data, cut, &out);
    if (used > cut)
        abort();
    if (!d.done)
        used += srv_data_feed(&d, (const char *)data + used, size - used, &out);
    if (used > size || (!d.overflow && out.len > d.total))
        abort();
    buf_free(&out);
    return 0;
}
