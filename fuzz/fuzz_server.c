/* fuzz_server: the reference server's parsers of what clients send: command verbs,
 * MAIL/RCPT paths and parameters, AUTH's base64 and PLAIN, IMAP's arguments (each
 * line as astrings, a sequence set, FETCH items, flags and SEARCH keys), and the
 * DATA receiver (dot-unstuffing, the terminator) fed in two reads split at a chosen
 * byte. The whole input is also a message whose ENVELOPE, BODYSTRUCTURE and
 * sections IMAP writes. */
#include "fuzz.h"

#include "server/imap_mime.h"
#include "server/imap_proto.h"
#include "server/proto.h"

static void imap_line(const char *l, size_t len)
{
    static struct imap_set set;
    static struct imap_fetch f;
    struct imap_search q;
    struct imap_cur c = { .p = l, .n = len };
    char out[256];
    size_t n;
    const char *why, *a;
    unsigned fl;
    while (imap_astring(&c, out, sizeof out, &n) == 0 && imap_sp(&c) == 0)
        if (n > sizeof out - 1)
            abort();
    c.i = 0;
    if (imap_atom(&c, &a, &n) == 0 && imap_set_parse(a, n, &set) == 0)
        (void)imap_set_has(&set, 7, 9);
    c.i = 0;
    (void)imap_fetch_parse(&c, &f, &why);
    c.i = 0;
    (void)imap_flags_parse(&c, &fl);
    c.i = 0;
    if (imap_search_parse(&c, &q, &why) == 0) {
        (void)imap_search_match(&q, 1, 2, fl, 3, 4);
        imap_search_free(&q);
    }
}

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
    imap_line(l, len);
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
    struct buf w = { 0 };
    struct imap_att att = { .sec = SEC_FIELDS_NOT };
    snprintf(att.fields, sizeof att.fields, "Subject To");
    imap_envelope(&w, (const char *)data, size);
    imap_bodystructure(&w, (const char *)data, size);
    imap_section(&w, (const char *)data, size, &att);
    imap_crlf(&w, (const char *)data, size);
    buf_free(&w);
    return 0;
}
