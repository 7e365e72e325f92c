/* fuzz_imap: the IMAP client's response reader (engine/imap_parse.c) as the
 * session feeds it: input arriving in pieces of a size its first byte picks (the
 * seeds, server sides of real Dovecot 2.3 transcripts, start with a '#'), the
 * reader resumed after each; every piece bounded by its limits, the reader never
 * stuck, and the same pieces come out whole or split. The word readers run on
 * every response's text. */
#include "fuzz.h"

#include "engine/imap_parse.h"

#define MAX_LINE 200
#define MAX_LITERAL 5000

/* What one pass handed out, as one checksum (kind, length and bytes of each
 * piece), and whether it ended on bad input. */
struct pass {
    uint64_t sum;
    int failed;
};

static void words(const struct imap_piece *pc)
{
    const char *tag, *rest, *after, *w;
    size_t tl, wl;
    uint64_t v;
    int k = imap_split(pc->p, pc->len, &tag, &tl, &rest);
    if (k < 0)
        return;
    if (rest < pc->p || rest > pc->p + pc->len)
        abort();
    size_t rn = (size_t)(pc->p + pc->len - rest);
    enum imap_status st = imap_status(rest, rn, &after);
    if (after < rest || after > rest + rn)
        abort();
    (void)imap_err_kind(st, after, (size_t)(rest + rn - after));
    if (imap_numbered(rest, rn, &v, &w, &wl) == 0 && (w < rest || w + wl > rest + rn))
        abort();
    int r = imap_item_num(rest, rn, "UID", &v);
    if (r != 0 && r != -1 && r != -2)
        abort();
    (void)imap_ends_with(rest, rn, "BODY[]");
    if (imap_is_capability(rest, rn))
        (void)imap_has_cap(rest, rn, "IDLE");
}

static struct pass run(const uint8_t *data, size_t size, size_t chunk)
{
    struct imap_rd rd;
    struct pass ps = { 1469598103934665603ull, 0 };
    char why[128];
    size_t have = 0, off = 0;        /* data[off .. have) is buffered */
    imap_rd_init(&rd, MAX_LINE, MAX_LITERAL);
    for (unsigned stuck = 0;;) {
        struct imap_piece pc;
        size_t used = 0;
        int r = imap_next(&rd, (const char *)data + off, have - off, &used, &pc, why, sizeof why);
        if (r < 0) {
            if (strlen(why) >= sizeof why)
                abort();
            ps.failed = 1;
            return ps;
        }
        if (r == 0) {
            if (have == size)
                return ps;
            have = have + chunk < size ? have + chunk : size;
            continue;
        }
        if (used > have - off)
            abort();
        /* only a literal's end takes nothing, and never twice in a row */
        stuck = used ? 0 : stuck + 1;
        if (stuck > 1)
            abort();
        if (pc.kind == IMAP_TEXT && (pc.len > MAX_LINE || pc.lit > MAX_LITERAL))
            abort();
        if (pc.kind == IMAP_LITLINE && pc.len > MAX_LINE)
            abort();
        if (pc.p && (pc.p < (const char *)data + off || pc.p + pc.len > (const char *)data + have))
            abort();
        if (pc.kind == IMAP_TEXT)
            words(&pc);
        ps.sum = (ps.sum ^ (uint64_t)pc.kind ^ ((uint64_t)pc.len << 8) ^ ((uint64_t)pc.last << 40)) * 1099511628211ull;
        for (size_t i = 0; i < pc.len; i++)
            ps.sum = (ps.sum ^ (uint8_t)pc.p[i]) * 1099511628211ull;
        off += used;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    size_t chunk = 1 + data[0] % 17;
    struct pass whole = run(data + 1, size - 1, size), split = run(data + 1, size - 1, chunk);
    if (whole.sum != split.sum || whole.failed != split.failed)
        abort();
    char q[64];
    char s[32];
    size_t n = size - 1 < sizeof s - 1 ? size - 1 : sizeof s - 1;
    memcpy(s, data + 1, n);
    s[n] = 0;
    if (imap_quote(s, q, sizeof q) == 0 && (q[0] != '"' || strlen(q) >= sizeof q))
        abort();
    return 0;
}
