/* imap_box: the mailboxes IMAP sessions share (imap_box.c): per user, the UIDs and
 * flags its sessions see, and the sessions that have it selected, so a delivery
 * can be pushed to those in IDLE. */
#ifndef MS_SERVER_IMAP_BOX_H
#define MS_SERVER_IMAP_BOX_H

#include <stddef.h>
#include <stdint.h>

#include "server/store/store.h"

struct srv;
struct imap;

/* One message of a mailbox as IMAP numbers it. sid is the store's uid. */
struct imap_ent {
    char sid[sizeof(((struct srv_item *)0)->uid)];
    uint32_t uid;
    unsigned flags;                  /* enum imap_flag bits */
    uint64_t date;                   /* INTERNALDATE: when this server first listed it (wall s) */
};

/* A mailbox's IMAP state, kept on the loop thread for the server's life; UIDVALIDITY
 * is the server's start time, so UIDs restart with it. */
struct imap_box {
    struct imap_ent *v;              /* ascending uid */
    size_t n, cap;
    uint32_t uidnext;
    struct imap *sel;                /* sessions with it selected */
};

/* The user's box, made on first use. */
struct imap_box *srv_imap_box(struct srv *srv, size_t user);
void srv_imap_boxes_free(struct srv *srv);

/* The listing items (sorted here by uid) merged into the box: known messages keep
 * their UID, new ones get the next, those gone leave. now is the wall clock. */
void imap_box_merge(struct imap_box *b, struct srv_items *items, uint64_t now);
/* The entry of a UID, or NULL. */
struct imap_ent *imap_box_find(struct imap_box *b, uint32_t uid);
/* Removes the entry of a UID (expunged). */
void imap_box_remove(struct imap_box *b, uint32_t uid);
/* The message of a UID under a new UID, its flags cleared (the fault again);
 * returns the new UID, 0 when the UID is unknown. */
uint32_t imap_box_renumber(struct imap_box *b, uint32_t uid);

#endif
