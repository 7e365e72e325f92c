/* imap_mailbox: the selected state of the reference server's IMAP sessions
 * (imap_mailbox.c): the session they share with imap.c, listing the mailbox and
 * bringing a session's view to it (EXPUNGE and EXISTS, pushed in IDLE), and the
 * commands over its messages: SEARCH, FETCH, STORE, EXPUNGE. */
#ifndef MS_SERVER_IMAP_MAILBOX_H
#define MS_SERVER_IMAP_MAILBOX_H

#include <stddef.h>
#include <stdint.h>

#include "server/imap_box.h"
#include "server/imap_proto.h"
#include "server/server.h"

#define IMAP_OUT_HIGH (256 * 1024)   /* FETCH waits for the client to read below this */

enum { DLY_CMD, DLY_BANNER };
enum { I_NOAUTH, I_AUTH, I_SELECTED };
enum { W_NONE, W_SELECT, W_SYNC, W_FETCH, W_EXPUNGE, W_DRAIN };

struct view {
    uint32_t uid;
    uint32_t item;                   /* index in req.items */
};

struct imap {
    struct srv_sess b;               /* first: freed as one block */
    int state, readonly, tls, idling, idle_silent, auth_wait, dirty, wait, uidcmd;
    int closecmd;                    /* the EXPUNGE out is CLOSE's: no untagged answers */
    int starttls;                    /* STARTTLS answered: the handshake follows */
    int greeted;                     /* implicit TLS: the greeting waits for the handshake */
    char tag[64];
    char user[256];
    long box;                        /* the selected user's index, -1 when none */
    struct imap *snext, *sprev;      /* on the box's list of selected sessions */
    struct srv_req req;              /* one request out at a time; the listing lives here */
    struct view *view;
    size_t nview, capview;
    uint32_t maxuid;                 /* highest UID this session has shown */
    struct buf cmd;                  /* the command being gathered, literals included */
    uint64_t lit_left;               /* literal bytes still to come */
    int lit_drop;                    /* ... to be dropped: the command is too long */
    char *pending;                   /* a command run again once the mailbox is listed */
    size_t npending;
    struct imap_fetch *fetch;        /* FETCH in progress */
    struct imap_set *set;
    size_t fpos;
    const struct srv_cmd_fault *again;   /* kind = again struck this FETCH */
    const struct srv_cmd_fault *undone;  /* kind = undone struck this EXPUNGE */
    const struct srv_cmd_fault *applied; /* kind = applied struck this STORE */
    struct buf msg;                  /* the fetched message with CRLF line ends */
};

/* imap.c */
void imap_reply(struct imap *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Runs the session over its buffered input (after a wait ended). */
void imap_process(struct imap *s);
/* One whole command; faults: command faults may strike; synced: the mailbox was
 * just listed for it (a command that waited for news is not sent for more). */
void imap_execute(struct imap *s, const char *p, size_t n, int faults, int synced);

/* imap_mailbox.c */
struct imap_box *imap_box_of(struct imap *s);
/* Sends s->req to the store; the session waits (wait: W_*) until imap_req_done. */
void imap_submit(struct imap *s, enum srv_op op, int wait);
void imap_req_done(struct srv_req *r);
void imap_unselect(struct imap *s);
/* Lists the mailbox: W_SELECT answers SELECT, W_SYNC brings the view up to date
 * (then runs s->pending, if any). */
void imap_list_box(struct imap *s, int wait);
/* Answers s->fetch over s->set from s->fpos on. */
void imap_fetch_step(struct imap *s);
void imap_cmd_search(struct imap *s, struct imap_cur *c);
void imap_cmd_store(struct imap *s, struct imap_cur *c);
/* EXPUNGE (set NULL) or UID EXPUNGE set; close: CLOSE's, answered without
 * untagged EXPUNGEs. */
void imap_cmd_expunge(struct imap *s, const struct imap_set *set, int close);

#endif
