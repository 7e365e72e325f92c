/* fuzz_pop3_session: a whole POP3 reader session (engine/pop3.c, pop3_pick.c)
 * against the input as the server's side (fuzz_session.h: its turns, escapes
 * and ledger checks; "@0".."@3" our message as RETR carries it, dot-stuffed,
 * with its final dot). The input's first byte picks the settings: bits 0-1
 * pop3.auth (user, apop, plain, auto), bit 2 pop3.leave (with keep_polls = 2),
 * bit 3 a visit of at most two messages, bit 4 pop3.preview (TOP), bit 5 the
 * drain's visits (pop3.visit = owed). Beyond the ledger's promises: a visit
 * reads nothing before its QUIT went out (so not on an early reply), nor
 * (mail not left) more than it deleted.
 * The seeds are the unit tests' visits and
 * Dovecot's replies. */
#include "fuzz_session.h"

#include "engine/pop3.h"

static size_t pop3_body(struct fz *f, unsigned k, char *out, size_t n)
{
    if (f->msglen[k] > n)
        abort();
    memcpy(out, f->msg[k], f->msglen[k]);
    return f->msglen[k];
}

/* DELE and QUIT sent; when QUIT goes out, this visit has read nothing yet (a
 * reply the server sent early is no answer to it). */
static void pop3_said(struct fz *f, const char *cmd)
{
    f->sent[0] += !strncmp(cmd, "DELE ", 5);
    if (!strncmp(cmd, "QUIT", 4)) {
        f->sent[1]++;
        if (f->st->c.read != f->read_at_dial)
            abort();
    }
}

/* A deletion commits only once the QUIT is answered (RFC 1939 6): nothing is
 * read before a QUIT went out, and, unless the client leaves mail on the
 * server, never more than it deleted. */
static void pop3_check(struct fz *f)
{
    uint64_t read = f->st->c.read;
    if ((read && !f->sent[1]) || (!f->cfg.pop3_leave && read > f->sent[0]))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const auth[] = { "pop3.auth=user", "pop3.auth=apop", "pop3.auth=plain", "pop3.auth=auto" };
    if (!size)
        return 0;
    unsigned b = data[0];
    const char *argv[] = {
        "--pop3", "127.0.0.1:110", "--senders", "0", "--set", "users.count=1", "--set", "pop3.readers=1",
        "--set", auth[b & 3],
        "--set", b & 4 ? "pop3.leave=yes" : "pop3.leave=no",
        "--set", b & 4 ? "pop3.keep_polls=2" : "pop3.keep_polls=0",
        "--set", b & 8 ? "pop3.max_per_session=2" : "pop3.max_per_session=10",
        "--set", b & 16 ? "pop3.preview=yes" : "pop3.preview=no",
        "--set", b & 32 ? "pop3.visit=owed" : "pop3.visit=random",
        NULL,
    };
    static struct fz f;
    memset(&f, 0, sizeof f);
    f.body = pop3_body;
    f.max_line = 1024;
    f.said = pop3_said;
    f.check = pop3_check;
    fz_new(&f, &pop3_ops, argv);
    fz_play(&f, data + 1, size - 1);
    fz_free(&f);
    return 0;
}
