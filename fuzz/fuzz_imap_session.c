/* fuzz_imap_session: a whole IMAP reader session (engine/imap.c, imap_sync.c,
 * imap_idle.c) against the input as the server's side (fuzz_session.h: its
 * turns, escapes and ledger checks). The input's first byte picks the settings:
 * bit 0 imap.pipelining off, bits 1-2 imap.delete (now, now, never, 2s), bits
 * 3-4 the model (drain, idle, poll, webmail), bit 5 imap.auth = auto (else login), bit 6 a
 * visit of at most two messages. The seeds are the server sides of the unit
 * tests' and reference-server transcripts, "@0".."@3" a FETCH's literal of our
 * message. Beyond the ledger's promises: with imap.delete = now a message is
 * read only once an untagged EXPUNGE reported it removed, so never more reads
 * than EXPUNGEs the server sent, and none before the client sent its EXPUNGE
 * (or, leaving mail, its STORE); the pipeline and the visit stay in bounds. */
#include "fuzz_session.h"

#include "engine/imap.h"
#include "engine/imap_session.h"

/* "{n}\r\n" and the message as IMAP's literal holds it: SMTP's dot-stuffing
 * undone, no final dot. */
static size_t imap_body(struct fz *f, unsigned k, char *out, size_t n)
{
    static char lit[FZ_MSG_MAX];
    const char *w = f->msg[k];
    size_t len = f->msglen[k], m = 0;
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(w + i, '\n', len - i);
        size_t l = nl ? (size_t)(nl - (w + i)) + 1 : len - i;
        if (l == 3 && !memcmp(w + i, ".\r\n", 3))
            break;
        size_t skip = w[i] == '.';
        memcpy(lit + m, w + i + skip, l - skip);
        m += l - skip;
        i += l;
    }
    int h = snprintf(out, n, "{%zu}\r\n", m);
    if (h < 0 || (size_t)h + m > n)
        abort();
    memcpy(out + h, lit, m);
    return (size_t)h + m;
}

/* EXPUNGE and STORE sent */
static void imap_said(struct fz *f, const char *cmd)
{
    f->sent[0] += strstr(cmd, " EXPUNGE") != NULL;
    f->sent[1] += strstr(cmd, " STORE ") != NULL;
}

static void imap_check(struct fz *f)
{
    const struct imap_session *s = (const struct imap_session *)f->set.v;
    if (s->nfl > IMAP_PIPE_MAX || s->nm > s->limit || s->limit > IMAP_VISIT_MAX || s->nm > s->capm)
        abort();
    if (!s->keep && f->st->c.read > f->expunges)
        abort();
    /* a read is committed by the answer to our EXPUNGE (a STORE of \Seen when
     * mail is left): none before we asked */
    if (f->st->c.read && !f->sent[s->keep ? 1 : 0])
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const del[] = { "imap.delete=now", "imap.delete=now", "imap.delete=never", "imap.delete=2s" };
    static const char *const model[] = { "imap.models=drain:100", "imap.models=idle:100", "imap.models=poll:100",
                                         "imap.models=webmail:100" };
    if (!size)
        return 0;
    unsigned b = data[0];
    const char *argv[] = {
        "--imap", "127.0.0.1:143", "--senders", "0", "--set", "users.count=1", "--set", "readers.protocol=imap",
        "--set", b & 1 ? "imap.pipelining=no" : "imap.pipelining=yes",
        "--set", del[(b >> 1) & 3],
        "--set", model[(b >> 3) & 3],
        "--set", b & 32 ? "imap.auth=auto" : "imap.auth=login",
        "--set", b & 64 ? "pop3.max_per_session=2" : "pop3.max_per_session=1000",
        "--set", "imap.idle_renew=10s",
        NULL,
    };
    static struct fz f;
    memset(&f, 0, sizeof f);
    f.body = imap_body;
    f.max_line = IMAP_SET_MAX + 128;
    f.check = imap_check;
    f.said = imap_said;
    fz_new(&f, &imap_ops, argv);
    fz_play(&f, data + 1, size - 1);
    fz_free(&f);
    return 0;
}
