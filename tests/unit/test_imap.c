/* test_imap: the IMAP reader (engine/imap.c, readers.protocol = imap) against
 * scripted server responses over an in-memory connection (session_script.h): a
 * visit that reads one of our messages (read only once its EXPUNGE is answered),
 * its body's literal split across reads, a refused login and a refused EXPUNGE
 * (the message stays owed), one message under two UIDs (duplicated), deletions
 * counted by what the EXPUNGE responses report (a refused STORE whose pipelined
 * UID EXPUNGE removed mail, an EXPUNGE that removed none or some), and hostile
 * servers: an overlong line, a literal over the cap or over the size given, a
 * non-synchronizing literal, an untagged flood, a reply with a tag of no command,
 * a reply sent before its command, an EXPUNGE beyond EXISTS, an unasked
 * VANISHED, a UID over 32 bits or no number, a body under another message
 * number than its listing's. The idle model: an EXISTS pushed during IDLE
 * fetched (its push latency timed), one that came while the client was busy
 * counted as the client's, mail no EXISTS announced found at the renewal. The
 * readers' visits kept-up reads: a sync of an idle client, a poll client's or a
 * drain reader's session, empty or finding mail that waited for it. And the
 * models not built yet refused at configuration time. imap.delete = never and
 * a DURATION: read and left, and deleted once that much older, then forgotten
 * as the EXPUNGE reports it removed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "engine/imap.h"
#include "engine/imap_session.h"
#include "run/metrics.h"
#include "session_script.h"

/* One user, so the session's pick is known. */
#define IMAP_ARGS "--imap", "127.0.0.1:143", "--senders", "0", "--set", "users.count=1", "--set", \
                  "readers.protocol=imap"
#define GREETING "S: * OK [CAPABILITY IMAP4rev1 SASL-IR LITERAL+ UIDPLUS IDLE AUTH=PLAIN] ready"

/* One of our messages for user 0, accepted, as its literal's bytes (not
 * dot-stuffed, no final dot): into out, NUL-terminated; its length. seq says
 * which ledger entry (0, 1, ...). */
static size_t our_message_at(struct script *sc, char *out, size_t n, uint64_t body_seed, uint32_t accepted_ms)
{
    struct run *r = sc->run;
    uint8_t digest[MSG_DIGEST_LEN];
    struct msg_params p = {
        .run_id = r->run_id, .from = "mailsoak@test.local", .to = r->users.v[0].addr,
        .body_size = 300, .body_seed = body_seed, .nrcpt = 1,
    };
    size_t blen = msg_body(&sc->gen, &p, digest);
    uint64_t d8;
    memcpy(&d8, digest, sizeof d8);
    uint64_t idx = ledger_add(&r->ledger, 0, 0, (uint32_t)blen, d8, 0);
    p.seq = ledger_seq(0, idx);
    ledger_accept(&r->ledger, ledger_get(&r->ledger, p.seq), accepted_ms);
    char wire[16384];
    assert_true(msg_wire_max(&sc->gen, &p, blen) < sizeof wire);
    size_t len = msg_write(&sc->gen, &p, blen, digest, wire);
    /* msg_write writes SMTP's dot-stuffed lines and the final dot: IMAP's literal
     * holds the message itself */
    size_t k = 0;
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(wire + i, '\n', len - i);
        size_t l = (size_t)(nl - (wire + i)) + 1;
        if (l == 3 && !memcmp(wire + i, ".\r\n", 3))
            break;
        size_t skip = wire[i] == '.';
        assert_true(k + l < n);
        memcpy(out + k, wire + i + skip, l - skip);
        k += l - skip;
        i += l;
    }
    out[k] = 0;
    return k;
}

/* Accepted 1 ms into the run. */
static size_t our_message(struct script *sc, char *out, size_t n, uint64_t body_seed)
{
    return our_message_at(sc, out, n, body_seed, 1);
}

static uint32_t entry_state(struct script *sc, uint64_t idx)
{
    return atomic_load(&ledger_get(&sc->run->ledger, ledger_seq(0, idx))->state);
}

/* Greeting, LOGIN, SELECT of a mailbox of n messages, the listing's command. */
static void to_listing(struct script *sc, unsigned n)
{
    char exists[64];
    snprintf(exists, sizeof exists, "S: * %u EXISTS", n);
    script_talk(sc, GREETING, "C: a1 LOGIN \"user0000@test.local\" ", "S: a1 OK [CAPABILITY IMAP4rev1 UIDPLUS] in",
                "C: a2 SELECT INBOX", exists, "S: * OK [UIDVALIDITY 1700000000] UIDs valid",
                "S: a2 OK [READ-WRITE] Select completed", "C: a3 UID FETCH 1:* (UID)", NULL);
}

/* The FETCH response of uid with body as its literal, said in pieces of chunk
 * bytes with the session running between them (0: at once). */
static void say_body(struct script *sc, unsigned seq, unsigned uid, const char *body, size_t chunk)
{
    char head[128];
    size_t len = strlen(body);
    snprintf(head, sizeof head, "* %u FETCH (UID %u RFC822.SIZE %zu BODY[] {%zu}\r\n", seq, uid, len, len);
    script_say(sc, head);
    for (size_t off = 0; off < len;) {
        size_t n = chunk && len - off > chunk ? chunk : len - off;
        char piece[4096];
        memcpy(piece, body + off, n);
        piece[n] = 0;
        script_say(sc, piece);
        script_idle(sc);
        off += n;
    }
    script_say(sc, ")\r\n");
}

/* A visit that fetched our message (its body in pieces of chunk bytes), flagged
 * it deleted with UID EXPUNGE and LOGOUT pipelined behind (imap.pipelining: all
 * three sent before any answer), the STORE answered, the EXPUNGE's answer
 * awaited. */
static struct script *fetched_then_expunge(size_t chunk)
{
    struct script *sc = SCRIPT_NEW(&imap_ops, IMAP_ARGS);
    static char msg[16384];
    our_message(sc, msg, sizeof msg, 7);
    to_listing(sc, 1);
    script_talk(sc, "S: * 1 FETCH (UID 7)", "S: a3 OK Fetch completed",
                "C: a4 UID FETCH 7 (UID RFC822.SIZE BODY.PEEK[])", NULL);
    say_body(sc, 1, 7, msg, chunk);
    script_talk(sc, "S: a4 OK Fetch completed", "C: a5 UID STORE 7 +FLAGS.SILENT (\\Deleted)", "C: a6 UID EXPUNGE 7",
                "C: a7 LOGOUT", "S: a5 OK Store", NULL);
    script_idle(sc);
    return sc;
}

static void reads_our_message(void **state)
{
    struct script *sc = fetched_then_expunge(0);
    /* deleted only once the EXPUNGE is answered: not read yet */
    assert_false(entry_state(sc, 0) & LS_READS);
    assert_true(entry_state(sc, 0) & LS_SEEN);
    script_talk(sc, "S: * 1 EXPUNGE", "S: a6 OK Expunge completed", NULL);
    script_idle(sc);
    uint32_t st = entry_state(sc, 0);
    assert_int_equal(st & LS_READS, 1);
    assert_false(st & LS_CORRUPT);
    assert_int_equal(sc->st->c.read, 1);
    assert_int_equal(atomic_load(&sc->run->ledger.owed_total), 0);
    script_talk(sc, "S: * BYE Logging out", "S: a7 OK Logout completed", NULL);
    script_run(sc, 20);
    assert_int_equal(sc->st->c.pop3_sessions, 1);
    assert_int_equal(sc->st->total[LAT_DELIVERY].count, 1);
    assert_int_equal(sc->st->total[LAT_IMAP_FETCH].count, 1);
    assert_int_equal(sc->st->total[LAT_IMAP_EXPUNGE].count, 1);
    assert_int_equal(sc->st->nerr, 0);
    script_free(sc);
}

/* The body's literal comes 7 bytes at a time, its lines cut anywhere: the digest
 * still matches. */
static void a_literal_split_across_reads(void **state)
{
    struct script *sc = fetched_then_expunge(7);
    script_talk(sc, "S: * 1 EXPUNGE", "S: a6 OK Expunge completed", NULL);
    script_idle(sc);
    assert_int_equal(entry_state(sc, 0) & LS_READS, 1);
    assert_false(entry_state(sc, 0) & LS_CORRUPT);
    assert_int_equal(sc->st->nerr, 0);
    script_free(sc);
}

/* A refused EXPUNGE: retrieved, not deleted, still owed. */
static void a_refused_expunge_stays_owed(void **state)
{
    struct script *sc = fetched_then_expunge(0);
    script_talk(sc, "S: a6 NO [SERVERBUG] Internal error", "S: a7 OK", NULL);
    script_run(sc, 20);
    assert_false(entry_state(sc, 0) & LS_READS);
    assert_int_equal(sc->st->c.read, 0);
    assert_int_equal(sc->st->c.peeked, 1);
    assert_int_equal(atomic_load(&sc->run->ledger.owed_total), 1);
    assert_int_equal(script_errors(sc, "imap_expunge_serverbug"), 1);
    script_free(sc);
}

/* A refused STORE with UID EXPUNGE and LOGOUT pipelined behind it: the
 * EXPUNGE's answer reports nothing removed, so the message stays owed, and the
 * LOGOUT already sent ends the visit. */
static void a_refused_store_drops_its_expunge(void **state)
{
    struct script *sc = SCRIPT_NEW(&imap_ops, IMAP_ARGS);
    static char msg[16384];
    our_message(sc, msg, sizeof msg, 7);
    to_listing(sc, 1);
    script_talk(sc, "S: * 1 FETCH (UID 7)", "S: a3 OK", "C: a4 UID FETCH 7 ", NULL);
    say_body(sc, 1, 7, msg, 0);
    script_talk(sc, "S: a4 OK", "C: a5 UID STORE 7 ", "C: a6 UID EXPUNGE 7", "C: a7 LOGOUT",
                "S: a5 NO [SERVERBUG] Internal error", "S: a6 OK", "S: * BYE", "S: a7 OK", NULL);
    script_quiet(sc, 20);            /* nothing more sent: the LOGOUT was already out */
    assert_false(entry_state(sc, 0) & LS_READS);
    assert_int_equal(sc->st->c.peeked, 1);
    assert_int_equal(atomic_load(&sc->run->ledger.owed_total), 1);
    assert_int_equal(script_errors(sc, "imap_store_serverbug"), 1);
    assert_int_equal(sc->st->c.pop3_sessions, 1);
    assert_int_equal(sc->st->c.imap_commands, 7);
    assert_int_equal(sc->st->c.imap_rounds, 4);   /* LOGIN+SELECT, listing, FETCH, STORE+EXPUNGE+LOGOUT */
    script_free(sc);
}

/* The visit of fetched_then_expunge's kind for messages of body seeds seeds[0..n)
 * under UIDs 7, 8, ...: STORE, UID EXPUNGE and LOGOUT pipelined, then what
 * the server says after that. */
static struct script *store_and_expunge(unsigned n, const char *const *said)
{
    struct script *sc = SCRIPT_NEW(&imap_ops, IMAP_ARGS);
    static char msg[3][16384];
    assert_true(n >= 1 && n <= 3);
    for (unsigned i = 0; i < n; i++)
        our_message(sc, msg[i], sizeof msg[i], 7 + i);
    to_listing(sc, n);
    for (unsigned i = 0; i < n; i++) {
        char line[64];
        snprintf(line, sizeof line, "* %u FETCH (UID %u)\r\n", i + 1, 7 + i);
        script_say(sc, line);
    }
    script_talk(sc, "S: a3 OK", "C: a4 UID FETCH ", NULL);
    for (unsigned i = 0; i < n; i++)
        say_body(sc, i + 1, 7 + i, msg[i], 0);
    script_talk(sc, "S: a4 OK", "C: a5 UID STORE ", "C: a6 UID EXPUNGE ", "C: a7 LOGOUT", NULL);
    for (; *said; said++)
        script_say(sc, *said);
    script_run(sc, 20);
    return sc;
}

/* A STORE refused but applied (or flags left by an earlier session): the UID
 * EXPUNGE pipelined behind it removed the message, and the server said so. Its
 * deletion is what the server reports, not what the STORE's answer implied:
 * read, no longer owed, not peeked. */
static void a_refused_store_whose_expunge_removed_it(void **state)
{
    struct script *sc = store_and_expunge(1, (const char *const[]){ "a5 NO [SERVERBUG] Internal error\r\n",
                                                                      "* 1 EXPUNGE\r\n", "a6 OK\r\n",
                                                                      "* BYE\r\n", "a7 OK\r\n", NULL });
    assert_int_equal(entry_state(sc, 0) & LS_READS, 1);
    assert_int_equal(sc->st->c.read, 1);
    assert_int_equal(sc->st->c.peeked, 0);
    assert_int_equal(atomic_load(&sc->run->ledger.owed_total), 0);
    assert_int_equal(script_errors(sc, "imap_store_serverbug"), 1);
    assert_int_equal(sc->st->nerr, 1);
    assert_int_equal(sc->st->c.imap_commands, 7);   /* nothing sent after the LOGOUT */
    assert_int_equal(sc->st->c.pop3_sessions, 1);
    script_free(sc);
}

/* An EXPUNGE answered OK that reported nothing removed: the message is not read
 * (a deletion the client cannot prove), stays owed, and the server's claim is
 * counted as imap_expunge_kept. */
static void an_expunge_that_removed_nothing(void **state)
{
    struct script *sc = store_and_expunge(1, (const char *const[]){ "a5 OK\r\n", "a6 OK\r\n", "* BYE\r\n",
                                                                      "a7 OK\r\n", NULL });
    assert_false(entry_state(sc, 0) & LS_READS);
    assert_true(entry_state(sc, 0) & LS_SEEN);
    assert_int_equal(sc->st->c.peeked, 1);
    assert_int_equal(atomic_load(&sc->run->ledger.owed_total), 1);
    assert_int_equal(script_errors(sc, "imap_expunge_kept"), 1);
    script_free(sc);
}

/* Of three flagged, the server reports two removed, by the numbers they had
 * then (the first's, then the third's, moved down to 2): those two are read,
 * the second stays owed. */
static void an_expunge_that_removed_some(void **state)
{
    struct script *sc = store_and_expunge(3, (const char *const[]){ "a5 OK\r\n", "* 1 EXPUNGE\r\n",
                                                                      "* 2 EXPUNGE\r\n", "a6 OK\r\n",
                                                                      "* BYE\r\n", "a7 OK\r\n", NULL });
    assert_int_equal(entry_state(sc, 0) & LS_READS, 1);
    assert_false(entry_state(sc, 1) & LS_READS);
    assert_int_equal(entry_state(sc, 2) & LS_READS, 1);
    assert_int_equal(sc->st->c.read, 2);
    assert_int_equal(sc->st->c.peeked, 1);
    assert_int_equal(atomic_load(&sc->run->ledger.owed_total), 1);
    assert_int_equal(script_errors(sc, "imap_expunge_kept"), 1);
    script_free(sc);
}

/* Where a command's time starts: its send, or the answer before it less a
 * round trip, whichever is later. */
static void when_a_command_could_begin(void **state)
{
    assert_int_equal(imap_began(100, 1000, 50), 950);    /* pipelined long before: as if sent alone */
    assert_int_equal(imap_began(980, 1000, 50), 980);    /* sent within the trip: from its send */
    assert_int_equal(imap_began(1200, 1000, 50), 1200);  /* sent after the answer (alone) */
    assert_int_equal(imap_began(10, 30, 50), 10);        /* a trip longer than the clock: no wrap */
}

/* A UID EXPUNGE pipelined behind its STORE is timed from when a command sent
 * alone would have left: the STORE's answer less the connection's round trip,
 * or its own send if that is later. Never from the STORE's answer, which made
 * it read about 0 ms beside the same command sent alone. */
static void a_pipelined_command_is_timed_as_sent_alone(void **state)
{
    for (int far = 0; far < 2; far++) {
        struct script *sc = SCRIPT_NEW(&imap_ops, IMAP_ARGS);
        struct imap_session *s = (struct imap_session *)sc->set.v;
        static char msg[16384];
        our_message(sc, msg, sizeof msg, 7);
        to_listing(sc, 1);
        script_talk(sc, "S: * 1 FETCH (UID 7)", "S: a3 OK", "C: a4 UID FETCH 7 ", NULL);
        say_body(sc, 1, 7, msg, 0);
        script_talk(sc, "S: a4 OK", "C: a5 UID STORE 7 ", "C: a6 UID EXPUNGE 7", "C: a7 LOGOUT", NULL);
        assert_int_equal(s->nfl, 3);
        uint64_t sent = s->fl[1].sent;
        /* far: a round trip longer than the test, so the EXPUNGE starts at its
         * send; near: none, so at the STORE's answer, which comes after now */
        s->rtt = far ? 600 * NS_PER_S : 0;
        uint64_t before = mono_ns();
        script_talk(sc, "S: a5 OK", NULL);
        script_idle(sc);
        assert_int_equal(s->state, IS_EXPUNGE);
        if (far)
            assert_true(s->t_sent == sent);
        else
            assert_true(s->t_sent >= before && s->t_sent > sent);
        script_talk(sc, "S: * 1 EXPUNGE", "S: a6 OK", NULL);
        script_idle(sc);
        assert_int_equal(sc->st->total[LAT_IMAP_EXPUNGE].count, 1);
        script_free(sc);
    }
}

/* A LOGOUT sent fresh behind a SELECT still in flight, unwanted since the login
 * was refused: the server begins it only once it answered the SELECT. */
static void a_command_behind_a_dropped_one_starts_at_its_answer(void **state)
{
    struct script *sc = SCRIPT_NEW(&imap_ops, IMAP_ARGS);
    struct imap_session *s = (struct imap_session *)sc->set.v;
    script_talk(sc, GREETING, "C: a1 LOGIN ", "C: a2 SELECT INBOX", "S: a1 NO [AUTHENTICATIONFAILED] no",
                "C: a3 LOGOUT", NULL);
    assert_int_equal(s->state, IS_LOGOUT);
    assert_true(s->t_sent == s->fl[1].sent);
    s->rtt = 0;
    uint64_t before = mono_ns();
    script_talk(sc, "S: a2 BAD Not logged in", NULL);
    script_idle(sc);
    assert_int_equal(s->nfl, 1);
    assert_true(s->t_sent >= before);
    script_free(sc);
}

/* imap.pipelining = no: one command at a time, each sent once the one before is
 * answered; as many round trips as commands. */
static void one_command_at_a_time(void **state)
{
    struct script *sc = SCRIPT_NEW(&imap_ops, IMAP_ARGS, "--set", "imap.pipelining=no");
    static char msg[16384];
    our_message(sc, msg, sizeof msg, 7);
    script_talk(sc, GREETING, "C: a1 LOGIN ", NULL);
    script_quiet(sc, 5);
    script_talk(sc, "S: a1 OK", "C: a2 SELECT INBOX", "S: * 1 EXISTS", "S: a2 OK", "C: a3 UID FETCH 1:* (UID)",
                "S: * 1 FETCH (UID 7)", "S: a3 OK", "C: a4 UID FETCH 7 ", NULL);
    say_body(sc, 1, 7, msg, 0);
    script_talk(sc, "S: a4 OK", "C: a5 UID STORE 7 ", NULL);
    script_quiet(sc, 5);
    script_talk(sc, "S: a5 OK", "C: a6 UID EXPUNGE 7", NULL);
    script_quiet(sc, 5);
    script_talk(sc, "S: * 1 EXPUNGE", "S: a6 OK", "C: a7 LOGOUT", "S: a7 OK", NULL);
    script_run(sc, 10);
    assert_int_equal(entry_state(sc, 0) & LS_READS, 1);
    assert_int_equal(sc->st->c.imap_commands, 7);
    assert_int_equal(sc->st->c.imap_rounds, 7);
    script_free(sc);
}

/* The same message under two UIDs: both expunged, read twice, duplicated. The
 * second EXPUNGE names 1 again: the first moved it down a number. */
static void one_message_under_two_uids(void **state)
{
    struct script *sc = SCRIPT_NEW(&imap_ops, IMAP_ARGS);
    static char msg[16384];
    our_message(sc, msg, sizeof msg, 7);
    to_listing(sc, 2);
    script_talk(sc, "S: * 1 FETCH (UID 7)", "S: * 2 FETCH (UID 8)", "S: a3 OK",
                "C: a4 UID FETCH 7:8 (UID RFC822.SIZE BODY.PEEK[])", NULL);
    say_body(sc, 1, 7, msg, 0);
    say_body(sc, 2, 8, msg, 0);
    script_talk(sc, "S: a4 OK", "C: a5 UID STORE 7:8 +FLAGS.SILENT (\\Deleted)", "C: a6 UID EXPUNGE 7:8",
                "C: a7 LOGOUT", "S: a5 OK", "S: * 1 EXPUNGE", "S: * 1 EXPUNGE", "S: a6 OK", NULL);
    script_idle(sc);
    assert_int_equal(entry_state(sc, 0) & LS_READS, 2);
    assert_int_equal(sc->st->nerr, 0);
    script_free(sc);
}

/* A refused login is counted at its stage, by its response code; nothing read.
 * The SELECT pipelined behind it is refused too, as its consequence: not
 * counted. */
static void a_refused_login(void **state)
{
    struct script *sc = SCRIPT_NEW(&imap_ops, IMAP_ARGS);
    script_talk(sc, GREETING, "C: a1 LOGIN ", "C: a2 SELECT INBOX", "S: a1 NO [AUTHENTICATIONFAILED] Authentication failed.",
                "C: a3 LOGOUT", "S: a2 BAD Not logged in", "S: * BYE", "S: a3 OK", NULL);
    script_run(sc, 20);
    assert_int_equal(script_errors(sc, "imap_login_auth"), 1);
    assert_int_equal(sc->st->nerr, 1);
    assert_int_equal(sc->st->c.read, 0);
    script_free(sc);
}

/* AUTHENTICATE PLAIN without SASL-IR: the credentials go after the server's "+". */
static void authenticate_plain_waits_for_its_continuation(void **state)
{
    struct script *sc = SCRIPT_NEW(&imap_ops, IMAP_ARGS, "--set", "imap.auth=plain");
    script_talk(sc, "S: * OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] ready", "C: a1 AUTHENTICATE PLAIN", NULL);
    script_quiet(sc, 5);
    script_talk(sc, "S: +", "C: AHVzZXIwMDAwQHRlc3QubG9jYWwA", "S: a1 OK", "C: a2 SELECT INBOX", NULL);
    script_free(sc);
}

/* A hostile server's input ends the session as a protocol error of its stage,
 * with nothing read. */
static void hostile(const char *setting, const char *const *said, const char *errclass)
{
    struct script *sc = setting ? SCRIPT_NEW(&imap_ops, IMAP_ARGS, "--set", setting) : SCRIPT_NEW(&imap_ops, IMAP_ARGS);
    static char msg[16384];
    our_message(sc, msg, sizeof msg, 7);
    to_listing(sc, 1);
    for (; *said; said++)
        script_say(sc, *said);
    script_run(sc, 20);
    if (script_errors(sc, errclass) != 1) {
        for (unsigned i = 0; i < sc->st->nerr; i++)
            print_message("counted %s %llu\n", sc->st->err[i].name, (unsigned long long)sc->st->err[i].count);
        fail_msg("%s not counted once", errclass);
    }
    assert_int_equal(sc->st->c.read, 0);
    assert_false(entry_state(sc, 0) & LS_SEEN);
    script_free(sc);
}

static void an_overlong_line(void **state)
{
    static char line[20000];
    memset(line, 'x', sizeof line - 3);
    memcpy(line, "* 1 FETCH (", 11);
    memcpy(line + sizeof line - 3, "\r\n", 3);
    hostile(NULL, (const char *const[]){ line, NULL }, "imap_list_protocol");
}

static void a_literal_over_the_cap(void **state)
{
    hostile("imap.max_literal=64k",
            (const char *const[]){ "* 1 FETCH (UID 7)\r\n", "a3 OK\r\n",
                                   "* 1 FETCH (UID 7 BODY[] {100000}\r\n", NULL },
            "imap_fetch_protocol");
}

static void a_literal_over_its_size(void **state)
{
    hostile(NULL,
            (const char *const[]){ "* 1 FETCH (UID 7)\r\n", "a3 OK\r\n",
                                   "* 1 FETCH (UID 7 RFC822.SIZE 10 BODY[] {300}\r\n", NULL },
            "imap_fetch_protocol");
}

/* An EXPUNGE of a number the mailbox does not hold, and QRESYNC's VANISHED,
 * never enabled: neither says which message went. */
static void an_expunge_beyond_exists(void **state)
{
    hostile(NULL, (const char *const[]){ "* 2 EXPUNGE\r\n", NULL }, "imap_list_protocol");
}

static void a_vanished_unasked(void **state)
{
    hostile(NULL, (const char *const[]){ "* VANISHED 7\r\n", NULL }, "imap_list_protocol");
}

/* UIDs are 32-bit (RFC 3501 9, nz-number): a listing of 500 UIDs of 19 digits
 * each, none consecutive, would overflow the UID set of the FETCH that follows
 * (IMAP_SET_MAX counts ten digits a UID). */
static void a_uid_over_32_bits(void **state)
{
    struct script *sc = SCRIPT_NEW(&imap_ops, IMAP_ARGS, "--set", "pop3.max_per_session=1000");
    to_listing(sc, 600);
    static char listing[500 * 64];
    size_t k = 0;
    for (unsigned i = 1; i <= 500; i++)
        k += (size_t)snprintf(listing + k, sizeof listing - k, "* %u FETCH (UID %llu)\r\n", i,
                              1000000000000000000ull + 2ull * i);
    script_say(sc, listing);
    script_say(sc, "a3 OK\r\n");
    script_run(sc, 20);
    assert_int_equal(script_errors(sc, "imap_list_protocol"), 1);
    assert_int_equal(sc->st->c.imap_commands, 3);   /* no FETCH of such a set sent */
    script_free(sc);
}

/* A body under another message number than its listing gave: an EXPUNGE
 * naming either number could not be attributed. */
static void a_body_under_another_number(void **state)
{
    hostile(NULL,
            (const char *const[]){ "* 1 FETCH (UID 7)\r\n", "a3 OK\r\n",
                                   "* 2 FETCH (UID 7 RFC822.SIZE 5 BODY[] {5}\r\nhello)\r\n", NULL },
            "imap_fetch_protocol");
}

/* A UID that is no number, or 0: a listing that skipped it would look whole. */
static void a_uid_that_is_no_number(void **state)
{
    hostile(NULL, (const char *const[]){ "* 1 FETCH (UID seven)\r\n", NULL }, "imap_list_protocol");
    hostile(NULL, (const char *const[]){ "* 1 FETCH (UID 0)\r\n", NULL }, "imap_list_protocol");
}

static void a_non_synchronizing_literal(void **state)
{
    hostile(NULL, (const char *const[]){ "* 1 FETCH (UID 7 X {5+}\r\n", NULL }, "imap_list_protocol");
}

static void an_untagged_flood(void **state)
{
    static char flood[200 * 20];
    size_t k = 0;
    for (int i = 0; i < 200; i++)
        k += (size_t)snprintf(flood + k, sizeof flood - k, "* OK still here\r\n");
    hostile(NULL, (const char *const[]){ flood, NULL }, "imap_list_protocol");
}

static void a_tag_of_no_command(void **state)
{
    hostile(NULL, (const char *const[]){ "* 1 FETCH (UID 7)\r\n", "a9 OK Fetch completed\r\n", NULL },
            "imap_list_protocol");
}

/* The answer to the next command came with this one's: it answers nothing. */
static void a_reply_before_its_command(void **state)
{
    hostile(NULL, (const char *const[]){ "* 1 FETCH (UID 7)\r\na3 OK\r\na4 OK Fetch completed\r\n", NULL },
            "imap_fetch_protocol");
}

/* Models that are not NAME:PERCENT adding up to 100 are refused when the settings
 * are read, never ignored. */
static void bad_models_are_refused(void **state)
{
    static const char *const refused[] = { "drain:90", "bogus:100", "idle:50,idle:50", "idle:101", "poll:-1,drain:101" };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        struct config cfg;
        char set[64], err[300];
        snprintf(set, sizeof set, "imap.models=%s", refused[i]);
        const char *argv[] = { "--imap", "127.0.0.1:143", "--smtp", "127.0.0.1:25", "--set",
                               "readers.protocol=imap", "--set", set };
        assert_int_equal(config_from_args(&cfg, 8, (char **)argv), 0);
        assert_int_equal(config_check(&cfg, err, sizeof err), -1);
        assert_non_null(strstr(err, "imap.models"));
        config_free(&cfg);
    }
    static const char *const taken[] = { "drain:100", "idle:100", "drain:20,idle:80", "idle:80,webmail:20",
                                         "poll:50,webmail:25,drain:25" };
    for (size_t i = 0; i < sizeof taken / sizeof taken[0]; i++) {
        struct config cfg;
        char set[64], err[300];
        snprintf(set, sizeof set, "imap.models=%s", taken[i]);
        const char *argv[] = { "--imap", "127.0.0.1:143", "--smtp", "127.0.0.1:25", "--set", "readers.protocol=imap",
                               "--set", set };
        assert_int_equal(config_from_args(&cfg, 8, (char **)argv), 0);
        assert_int_equal(config_check(&cfg, err, sizeof err), 0);
        config_free(&cfg);
    }
    /* idle clients keep their mailboxes to themselves */
    struct config cfg;
    char err[300];
    const char *argv[] = { "--imap", "127.0.0.1:143", "--smtp", "127.0.0.1:25", "--set", "readers.protocol=imap",
                           "--set", "imap.models=idle:100", "--set", "pop3.exclusive=no" };
    assert_int_equal(config_from_args(&cfg, 10, (char **)argv), 0);
    assert_int_equal(config_check(&cfg, err, sizeof err), -1);
    assert_non_null(strstr(err, "exclusive"));
    config_free(&cfg);
    /* imap.delete: now, never or a duration of run time; the last two keep a
     * client's memory of its mailbox, its own */
    static const struct { const char *v, *exclusive; int ok; } del[] = {
        { "now", "no", 0 }, { "never", "yes", 0 }, { "2d", "yes", 0 }, { "30s", "yes", 0 },
        { "2d", "no", -1 }, { "never", "no", -1 }, { "soon", "yes", -1 },
    };
    for (size_t i = 0; i < sizeof del / sizeof del[0]; i++) {
        char set[64], ex[64];
        snprintf(set, sizeof set, "imap.delete=%s", del[i].v);
        snprintf(ex, sizeof ex, "pop3.exclusive=%s", del[i].exclusive);
        const char *dv[] = { "--imap", "127.0.0.1:143", "--smtp", "127.0.0.1:25", "--set", "readers.protocol=imap",
                             "--set", set, "--set", ex };
        assert_int_equal(config_from_args(&cfg, 10, (char **)dv), 0);
        assert_int_equal(config_check(&cfg, err, sizeof err), del[i].ok);
        if (del[i].ok)
            assert_non_null(strstr(err, "imap.delete"));
        config_free(&cfg);
    }
}

/* ---- the idle model ---- */

#define IDLE_ARGS IMAP_ARGS, "--set", "imap.models=idle:100", "--set", "imap.idle_renew=10s"

/* An idle user's client: logged in, its INBOX empty, in IDLE. */
static struct script *idling(void)
{
    struct script *sc = SCRIPT_NEW(&imap_ops, IDLE_ARGS);
    script_talk(sc, GREETING, "C: a1 LOGIN \"user0000@test.local\" ", "S: a1 OK [CAPABILITY IMAP4rev1 UIDPLUS IDLE] in",
                "C: a2 SELECT INBOX", "S: * 0 EXISTS", "S: * OK [UIDVALIDITY 1700000000] UIDs valid",
                "S: a2 OK [READ-WRITE] Select completed", "C: a3 IDLE", "S: + idling", NULL);
    return sc;
}

/* A message fetched, flagged and expunged by an idle client, its commands from
 * tag a<first>; the client idles again after. */
static void idle_sync(struct script *sc, unsigned first, unsigned uid, const char *msg)
{
    char c1[64], c2[64], c3[64], c4[64], c5[64], s1[64], s2[32], s3[32], s4[32], s5[32], list[64];
    snprintf(c1, sizeof c1, "C: a%u UID FETCH", first);
    snprintf(list, sizeof list, "S: * 1 FETCH (UID %u)", uid);
    snprintf(s1, sizeof s1, "S: a%u OK Fetch completed", first);
    snprintf(c2, sizeof c2, "C: a%u UID FETCH %u (UID RFC822.SIZE BODY.PEEK[])", first + 1, uid);
    snprintf(s2, sizeof s2, "S: a%u OK", first + 1);
    snprintf(c3, sizeof c3, "C: a%u UID STORE %u +FLAGS.SILENT (\\Deleted)", first + 2, uid);
    snprintf(s3, sizeof s3, "S: a%u OK", first + 2);
    snprintf(c4, sizeof c4, "C: a%u UID EXPUNGE %u", first + 3, uid);
    snprintf(s4, sizeof s4, "S: a%u OK", first + 3);
    snprintf(c5, sizeof c5, "C: a%u IDLE", first + 4);
    snprintf(s5, sizeof s5, "S: + idling");
    script_talk(sc, c1, list, s1, c2, NULL);
    say_body(sc, 1, uid, msg, 0);
    script_talk(sc, s2, c3, s3, c4, "S: * 1 EXPUNGE", s4, c5, s5, NULL);
    script_idle(sc);
}

/* An EXISTS pushed during IDLE: DONE, the new UIDs listed, fetched, expunged,
 * IDLE again; its push latencies measured, the next sync listing only newer UIDs. */
static void exists_during_idle_is_fetched(void **state)
{
    struct script *sc = idling();
    static char msg[16384];
    our_message_at(sc, msg, sizeof msg, 7, 0);
    script_quiet(sc, 5000);          /* idling: no command, no timeout */
    /* and holding no buffers: 10,000 idle clients fit in a few KiB each */
    const struct imap_session *s = (const struct imap_session *)sc->set.v;
    assert_int_equal(s->state, IS_IDLING);
    assert_int_equal(s->c.in.cap + s->c.out.cap, 0);
    script_talk(sc, "S: * 1 EXISTS", "C: DONE", "S: a3 OK Idle completed", NULL);
    idle_sync(sc, 4, 7, msg);
    assert_int_equal(entry_state(sc, 0) & LS_READS, 1);
    assert_int_equal(sc->st->c.read, 1);
    assert_int_equal(sc->st->total[LAT_PUSH_EXISTS].count, 1);
    assert_int_equal(sc->st->total[LAT_PUSH_FETCHED].count, 1);
    assert_int_equal(sc->st->total[LAT_IMAP_IDLE].count, 2);
    assert_int_equal(sc->st->c.push_busy, 0);
    assert_int_equal(sc->st->c.push_missed, 0);
    /* two syncs, two reader visits (kept-up's): the login's, and the push's,
     * whose mail came while the client waited for the server, not for it */
    assert_int_equal(sc->st->c.idle_syncs, 2);
    assert_int_equal(sc->st->c.full_visits, 0);
    assert_int_equal(sc->st->c.empty_visits, 0);
    script_talk(sc, "S: * 1 EXISTS", "C: DONE", "S: a8 OK", "C: a9 UID FETCH 8:* (UID)", NULL);
    assert_int_equal(sc->st->nerr, 0);
    script_free(sc);
}

/* The "+" to IDLE gives the buffers back (conn_trim) while the response loop
 * still runs: what it peeks at then is memory, not NULL (NULL + 0 is undefined,
 * which clang's UBSan reports; fuzz_imap_session found it). */
static void idling_peeks_at_memory(void **state)
{
    struct script *sc = idling();
    const struct imap_session *s = (const struct imap_session *)sc->set.v;
    script_idle(sc);
    assert_int_equal(s->c.in.cap, 0);
    assert_int_equal(conn_avail(&s->c), 0);
    assert_non_null(conn_peek(&s->c));
    script_talk(sc, "S: * 1 EXISTS", "C: DONE", NULL);
    script_free(sc);
}

/* An EXISTS that comes while the client fetches: it syncs again before it idles,
 * and the message is counted as its delay (push_busy), not timed as a push. */
static void exists_while_busy_is_the_clients_delay(void **state)
{
    struct script *sc = idling();
    static char msg[16384], msg2[16384];
    our_message_at(sc, msg, sizeof msg, 7, 0);
    our_message_at(sc, msg2, sizeof msg2, 8, 0);
    script_talk(sc, "S: * 1 EXISTS", "C: DONE", "S: a3 OK", "C: a4 UID FETCH 1:* (UID)", "S: * 1 FETCH (UID 7)",
                "S: a4 OK", "C: a5 UID FETCH 7 ", "S: * 2 EXISTS", NULL);
    say_body(sc, 1, 7, msg, 0);
    script_talk(sc, "S: a5 OK", "C: a6 UID STORE 7 ", "S: a6 OK", "C: a7 UID EXPUNGE 7", "S: * 1 EXPUNGE",
                "S: a7 OK", "C: a8 UID FETCH 8:* (UID)", "S: * 1 FETCH (UID 8)", "S: a8 OK",
                "C: a9 UID FETCH 8 ", NULL);
    say_body(sc, 1, 8, msg2, 0);
    script_talk(sc, "S: a9 OK", "C: a10 UID STORE 8 ", "S: a10 OK", "C: a11 UID EXPUNGE 8", "S: * 1 EXPUNGE", "S: a11 OK",
                "C: a12 IDLE", NULL);
    assert_int_equal(sc->st->c.read, 2);
    assert_int_equal(sc->st->total[LAT_PUSH_EXISTS].count, 1);
    assert_int_equal(sc->st->total[LAT_PUSH_FETCHED].count, 2);
    assert_int_equal(sc->st->c.push_busy, 1);
    /* the second sync's mail waited for the busy client: a full visit */
    assert_int_equal(sc->st->c.idle_syncs, 3);
    assert_int_equal(sc->st->c.full_visits, 1);
    script_free(sc);
}

/* IDLE is renewed after imap.idle_renew (DONE, NOOP); mail the renewal's sync
 * finds that no EXISTS announced while the client idled is the server's missed
 * push: counted, and an error class. */
static void a_renewal_finds_what_no_exists_announced(void **state)
{
    struct script *sc = idling();
    static char msg[16384];
    our_message_at(sc, msg, sizeof msg, 7, 0);
    script_quiet(sc, 9900);
    script_run(sc, 200);
    /* the NOOP asks for the news a server shows only when asked */
    script_talk(sc, "C: DONE", "S: a3 OK", "C: a4 NOOP", "S: * 1 EXISTS", "S: a4 OK", NULL);
    idle_sync(sc, 5, 7, msg);
    assert_int_equal(sc->st->c.read, 1);
    assert_int_equal(sc->st->c.push_missed, 1);
    assert_int_equal(sc->st->c.push_busy, 0);
    assert_int_equal(sc->st->total[LAT_PUSH_EXISTS].count, 0);
    assert_int_equal(sc->st->total[LAT_PUSH_FETCHED].count, 1);
    assert_int_equal(script_errors(sc, "imap_idle_unannounced"), 1);
    assert_int_equal(sc->st->c.full_visits, 0);      /* the server's missed push, not the client's wait */
    script_free(sc);
}

/* ---- the webmail and poll models ---- */

/* Webmail: EXAMINE, the newest 50's headers, the newest body, LOGOUT; nothing
 * deleted, nothing counted read, and no lock on the mailbox. */
static void a_webmail_session(void **state)
{
    struct script *sc = SCRIPT_NEW(&imap_ops, IMAP_ARGS, "--set", "imap.models=webmail:100", "--set",
                                   "imap.poll_interval=1m");
    static char msg[16384];
    our_message(sc, msg, sizeof msg, 7);
    for (int i = 0; i < 700 && !sc->dials; i++)
        script_run(sc, 100);         /* the first login, within the first interval */
    uint64_t first = sc->now;
    script_talk(sc, GREETING, "C: a1 LOGIN ", "S: a1 OK", "C: a2 EXAMINE INBOX", "S: * 60 EXISTS",
                "S: a2 OK [READ-ONLY]", "C: a3 FETCH 11:* (UID FLAGS RFC822.SIZE INTERNALDATE ENVELOPE BODY.PEEK[HEADER",
                "S: * 59 FETCH (UID 70 BODY[HEADER.FIELDS (FROM TO SUBJECT DATE)] {12}", "S: From: a@b", "S: )",
                "S: * 60 FETCH (UID 71 BODY[HEADER.FIELDS (FROM TO SUBJECT DATE)] {12}", "S: From: a@b", "S: )",
                "S: a3 OK", "C: a4 UID FETCH 71 (BODY.PEEK[])", NULL);
    assert_int_equal(atomic_load(&sc->run->mailbox_busy[0]), 0);
    say_body(sc, 60, 71, msg, 0);
    script_talk(sc, "S: a4 OK", "C: a5 LOGOUT", "S: * BYE", "S: a5 OK", NULL);
    script_run(sc, 10);
    assert_int_equal(sc->st->c.read, 0);
    assert_false(entry_state(sc, 0) & LS_SEEN);
    assert_int_equal(sc->st->total[LAT_IMAP_HEADERS].count, 1);
    assert_int_equal(sc->st->nerr, 0);
    /* the next login an interval (+- 10 %) after the first */
    for (int i = 0; i < 800 && sc->dials < 2; i++)
        script_run(sc, 100);
    uint64_t gap_ms = (sc->now - first) / NS_PER_MS;
    assert_int_equal(sc->dials, 2);
    assert_true(gap_ms >= 53900 && gap_ms <= 66100);
    script_free(sc);
}

/* Poll: a client logs in every poll_interval, fetches and deletes what is there,
 * logs out; the next check waits for its time. */
static void a_poll_client(void **state)
{
    struct script *sc = SCRIPT_NEW(&imap_ops, IMAP_ARGS, "--set", "imap.models=poll:100", "--set",
                                   "imap.poll_interval=1m");
    static char msg[16384];
    our_message(sc, msg, sizeof msg, 7);
    for (int i = 0; i < 700 && !sc->dials; i++)
        script_run(sc, 100);         /* the first check, within the first interval */
    uint64_t first = sc->now;
    to_listing(sc, 1);
    script_talk(sc, "S: * 1 FETCH (UID 7)", "S: a3 OK", "C: a4 UID FETCH 7 (UID RFC822.SIZE BODY.PEEK[])", NULL);
    say_body(sc, 1, 7, msg, 0);
    script_talk(sc, "S: a4 OK", "C: a5 UID STORE 7 ", "S: a5 OK", "C: a6 UID EXPUNGE 7", "S: * 1 EXPUNGE",
                "S: a6 OK", "C: a7 LOGOUT", "S: a7 OK", NULL);
    script_run(sc, 10);
    assert_int_equal(sc->st->c.read, 1);
    assert_int_equal(sc->st->c.full_visits, 1);      /* its mail waited for the check */
    /* the next check 54 to 66 s (the interval +- 10 %) after the first */
    for (int i = 0; i < 800 && sc->dials < 2; i++)
        script_run(sc, 100);
    uint64_t gap_ms = (sc->now - first) / NS_PER_MS;
    assert_int_equal(sc->dials, 2);
    assert_true(gap_ms >= 53900 && gap_ms <= 66100);
    script_free(sc);
}

/* imap.delete = never: ours flagged seen and left, read at the STORE's answer;
 * the next visit lists it and fetches it no more. */
static void leave_on_server(void **state)
{
    struct script *sc = SCRIPT_NEW(&imap_ops, IMAP_ARGS, "--set", "imap.delete=never");
    static char msg[16384];
    our_message(sc, msg, sizeof msg, 7);
    to_listing(sc, 1);
    script_talk(sc, "S: * 1 FETCH (UID 7)", "S: a3 OK", "C: a4 UID FETCH 7 (UID RFC822.SIZE BODY.PEEK[])", NULL);
    say_body(sc, 1, 7, msg, 0);
    script_talk(sc, "S: a4 OK", "C: a5 UID STORE 7 +FLAGS.SILENT (\\Seen)", NULL);
    assert_false(entry_state(sc, 0) & LS_READS);
    script_talk(sc, "S: a5 OK", "C: a6 LOGOUT", "S: a6 OK", NULL);
    script_run(sc, 10);
    assert_int_equal(entry_state(sc, 0) & LS_READS, 1);
    assert_int_equal(sc->st->c.read, 1);
    /* the next visit (the sweep's, or a reader's) skips what was read and left */
    uint64_t dials = sc->dials;
    atomic_store(&sc->run->ledger.owed[0], 1);    /* as if more were owed: a visit comes */
    for (int i = 0; i < 100 && sc->dials == dials; i++)
        script_run(sc, 100);
    script_talk(sc, GREETING, "C: a7 LOGIN ", "S: a7 OK", "C: a8 SELECT INBOX", "S: * 1 EXISTS",
                "S: * OK [UIDVALIDITY 1700000000] UIDs valid", "S: a8 OK", "C: a9 UID FETCH 1:* (UID)",
                "S: * 1 FETCH (UID 7)", "S: a9 OK", "C: a10 LOGOUT", NULL);
    assert_int_equal(entry_state(sc, 0) & LS_READS, 1);
    script_free(sc);
}

/* A drain reader's visit to a mailbox owed mail that holds none yet: an empty
 * visit (the server had not delivered it), what kept-up charges to the server. */
static void an_empty_visit(void **state)
{
    struct script *sc = SCRIPT_NEW(&imap_ops, IMAP_ARGS);
    static char msg[16384];
    our_message(sc, msg, sizeof msg, 7);
    script_talk(sc, GREETING, "C: a1 LOGIN ", "S: a1 OK", "C: a2 SELECT INBOX", "S: * 0 EXISTS",
                "S: a2 OK [READ-WRITE]", "C: a3 LOGOUT", "S: * BYE", "S: a3 OK", NULL);
    script_run(sc, 10);
    assert_int_equal(sc->st->c.pop3_sessions, 1);
    assert_int_equal(sc->st->c.empty_visits, 1);
    assert_int_equal(sc->st->c.full_visits, 0);
    script_free(sc);
}

/* imap.delete = 2s: ours read and left at the first visit, listed and left at
 * a visit within the 2 s; the session is then at the first visit after them,
 * its aged message listed (UID 7), the STORE of \\Deleted and the UID EXPUNGE
 * behind it sent. */
static struct script *aged_visit(void)
{
    struct script *sc = SCRIPT_NEW(&imap_ops, IMAP_ARGS, "--set", "imap.delete=2s");
    static char msg[16384];
    our_message_at(sc, msg, sizeof msg, 7, 0);
    to_listing(sc, 1);
    script_talk(sc, "S: * 1 FETCH (UID 7)", "S: a3 OK", "C: a4 UID FETCH 7 (UID RFC822.SIZE BODY.PEEK[])", NULL);
    say_body(sc, 1, 7, msg, 0);
    script_talk(sc, "S: a4 OK", "C: a5 UID STORE 7 +FLAGS.SILENT (\\Seen)", "S: a5 OK", "C: a6 LOGOUT", "S: a6 OK",
                NULL);
    script_run(sc, 10);
    assert_int_equal(entry_state(sc, 0) & LS_READS, 1);
    /* a visit within the 2 s: listed, left */
    uint64_t dials = sc->dials;
    atomic_store(&sc->run->ledger.owed[0], 1);    /* as if more were owed: a visit comes */
    for (int i = 0; i < 100 && sc->dials == dials; i++)
        script_run(sc, 10);
    assert_true(run_ms(sc->run, sc->now) < 2000);
    script_talk(sc, GREETING, "C: a7 LOGIN ", "S: a7 OK", "C: a8 SELECT INBOX", "S: * 1 EXISTS",
                "S: * OK [UIDVALIDITY 1700000000] UIDs valid", "S: a8 OK", "C: a9 UID FETCH 1:* (UID)",
                "S: * 1 FETCH (UID 7)", "S: a9 OK", "C: a10 LOGOUT", "S: a10 OK", NULL);
    script_run(sc, 10);
    /* the first visit after them: flagged deleted, expunged */
    script_quiet(sc, 2000);
    dials = sc->dials;
    for (int i = 0; i < 100 && sc->dials == dials; i++)
        script_run(sc, 10);
    script_talk(sc, GREETING, "C: a11 LOGIN ", "S: a11 OK", "C: a12 SELECT INBOX", "S: * 1 EXISTS",
                "S: * OK [UIDVALIDITY 1700000000] UIDs valid", "S: a12 OK", "C: a13 UID FETCH 1:* (UID)",
                "S: * 1 FETCH (UID 7)", "S: a13 OK", "C: a14 UID STORE 7 +FLAGS.SILENT (\\Deleted)",
                "C: a15 UID EXPUNGE 7", "C: a16 LOGOUT", NULL);
    assert_int_equal(sc->run->seen.box[0].n, 1);
    return sc;
}

/* imap.delete = 2s: ours flagged seen and left as with never; a visit within
 * the 2 s of its acceptance leaves it, the first after them flags it deleted
 * and expunges it, and this client forgets it (a server that served it again
 * would have it fetched again: duplicated). */
static void delete_after_a_delay(void **state)
{
    struct script *sc = aged_visit();
    script_talk(sc, "S: a14 OK", "S: * 1 EXPUNGE", "S: a15 OK", "S: a16 OK", NULL);
    script_run(sc, 10);
    assert_int_equal(sc->run->seen.box[0].n, 0);  /* forgotten: served again, it is fetched again */
    assert_int_equal(sc->st->c.read, 1);
    assert_int_equal(entry_state(sc, 0) & LS_READS, 1);
    assert_int_equal(sc->st->nerr, 0);
    script_free(sc);
}

/* The aged message's STORE refused, yet the UID EXPUNGE behind it reported it
 * removed: forgotten all the same; one it did not report is kept in mind, to be
 * deleted at the next sync. */
static void an_aged_message_forgotten_as_reported(void **state)
{
    struct script *sc = aged_visit();
    script_talk(sc, "S: a14 NO [SERVERBUG] Internal error", "S: * 1 EXPUNGE", "S: a15 OK", "S: a16 OK", NULL);
    script_run(sc, 10);
    assert_int_equal(sc->run->seen.box[0].n, 0);
    assert_int_equal(sc->st->c.read, 1);
    script_free(sc);
    sc = aged_visit();
    script_talk(sc, "S: a14 OK", "S: a15 OK", "S: a16 OK", NULL);
    script_run(sc, 10);
    assert_int_equal(sc->run->seen.box[0].n, 1);
    script_free(sc);
}

/* Prometheus names the reader sessions by the protocol they speak. */
static void metrics_name_the_readers_protocol(void **state)
{
    static struct hist lat[LAT_COUNT];
    struct counters c = { .pop3_sessions = 3 };
    struct ledger_outcome lo = { 0 };
    struct metrics_view v = { .run_id = "r", .label = "l", .phase = "send", .c = &c, .lat = lat, .lo = &lo,
                              .readers = "imap" };
    size_t len;
    char *text = metrics_text(&v, &len);
    assert_non_null(strstr(text, "mailsoak_sessions_total{protocol=\"imap\"} 3"));
    assert_null(strstr(text, "protocol=\"pop3\""));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_our_message),
        cmocka_unit_test(a_literal_split_across_reads),
        cmocka_unit_test(a_refused_expunge_stays_owed),
        cmocka_unit_test(one_message_under_two_uids),
        cmocka_unit_test(a_refused_store_drops_its_expunge),
        cmocka_unit_test(when_a_command_could_begin),
        cmocka_unit_test(a_pipelined_command_is_timed_as_sent_alone),
        cmocka_unit_test(a_command_behind_a_dropped_one_starts_at_its_answer),
        cmocka_unit_test(a_refused_store_whose_expunge_removed_it),
        cmocka_unit_test(an_expunge_that_removed_nothing),
        cmocka_unit_test(an_expunge_that_removed_some),
        cmocka_unit_test(one_command_at_a_time),
        cmocka_unit_test(a_refused_login),
        cmocka_unit_test(authenticate_plain_waits_for_its_continuation),
        cmocka_unit_test(an_overlong_line),
        cmocka_unit_test(a_literal_over_the_cap),
        cmocka_unit_test(a_literal_over_its_size),
        cmocka_unit_test(a_non_synchronizing_literal),
        cmocka_unit_test(an_untagged_flood),
        cmocka_unit_test(a_tag_of_no_command),
        cmocka_unit_test(a_reply_before_its_command),
        cmocka_unit_test(an_expunge_beyond_exists),
        cmocka_unit_test(a_vanished_unasked),
        cmocka_unit_test(a_uid_over_32_bits),
        cmocka_unit_test(a_uid_that_is_no_number),
        cmocka_unit_test(a_body_under_another_number),
        cmocka_unit_test(bad_models_are_refused),
        cmocka_unit_test(exists_during_idle_is_fetched),
        cmocka_unit_test(idling_peeks_at_memory),
        cmocka_unit_test(exists_while_busy_is_the_clients_delay),
        cmocka_unit_test(a_renewal_finds_what_no_exists_announced),
        cmocka_unit_test(a_webmail_session),
        cmocka_unit_test(a_poll_client),
        cmocka_unit_test(metrics_name_the_readers_protocol),
        cmocka_unit_test(leave_on_server),
        cmocka_unit_test(an_empty_visit),
        cmocka_unit_test(delete_after_a_delay),
        cmocka_unit_test(an_aged_message_forgotten_as_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
