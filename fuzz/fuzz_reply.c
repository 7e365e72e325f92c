/* fuzz_reply: the parsers of server replies, fed line by line as the sessions feed
 * them: SMTP replies (multi-line, codes) and EHLO keywords, POP3 status lines, -ERR
 * kinds, counts and LIST/UIDL listing lines, the SIZE an EHLO line advertises, the queue id of an end-of-data reply
 * (bounded, and made of id characters only). */
#include "fuzz.h"

#include "engine/reply.h"

static void line(char *l, size_t len, void *arg)
{
    struct smtp_reply *r = arg;
    int done = smtp_reply_feed(r, l, len);
    if (done != 0)
        smtp_reply_reset(r);
    if (r->len >= sizeof r->text)
        abort();
    (void)ehlo_keywords(len > 4 ? l + 4 : l, len > 4 ? len - 4 : 0);
    if (ehlo_size(len > 4 ? l + 4 : l, len > 4 ? len - 4 : 0) > (1ull << 53))
        abort();
    char qid[SMTP_QID_MAX + 1];
    size_t qn = smtp_queue_id(l, len, qid);
    if (qn > SMTP_QID_MAX || strlen(qid) != qn)
        abort();
    for (size_t i = 0; i < qn; i++)
        if (qid[i] <= ' ' || qid[i] > '~')
            abort();
    const char *text, *end, *rest;
    size_t rl;
    unsigned n;
    if (pop3_status(l, len, &text) == 0)
        (void)pop3_err_kind(text);
    if (pop3_number(text, &end, &n) == 0 && end < text)
        abort();
    if (pop3_listing(l, len, &n, &rest, &rl) == 0 && rest + rl != l + len)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct smtp_reply r;
    smtp_reply_reset(&r);
    fuzz_lines(data, size, line, &r);
    return 0;
}
