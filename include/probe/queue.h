/* queue: a mail server's queue counted in messages, whatever MTA keeps it, and read
 * message by message for the X-Mailsoak-Id of each queued message.
 *
 * Formats (server.spool_format):
 * - postfix: one file per message in incoming, active, deferred, hold and maildrop
 *   (hashed subdirectories included); defer/, bounce/ and trace/ hold delivery logs,
 *   not messages. A file of incoming or maildrop counts once its writer marked it
 *   complete (owner execute bit), as qmgr and pickup require.
 * - exim: input/ID-H (envelope and headers) and ID-D (body) per message, split into
 *   input/X/ with split_spool_directory; ID-J lists recipients delivered by an attempt
 *   in progress. A message is its -H file.
 * - opensmtpd: queue/XX/MSGID/message plus one envelope file per recipient still to
 *   deliver; incoming/ holds messages still being received (not acknowledged).
 * - sendmail: qfID (envelope and headers) and dfID (body); hfID is a quarantined (held)
 *   qf; queue groups (q1, q2, ...) and qf/ df/ xf/ subdirectories are followed.
 * - files: every regular file below the directory, recursively.
 * - auto: recognised from the directory's structure, and while that says nothing,
 *   from the names of the files in it; a directory of nothing recognisable counts as
 *   files until it is recognised.
 * A queue root can be named instead of its message directories: a Postfix
 * queue_directory, an Exim spool_directory, an OpenSMTPD spool (/var/spool/smtpd).
 *
 * Counting (queue_count) reads directory entries only, to stay cheap per sample; reading
 * ids (queue_scan) opens every queued message and is meant for the end of a run. */
#ifndef MS_QUEUE_H
#define MS_QUEUE_H

#include <stddef.h>
#include <stdint.h>

enum queue_format { QUEUE_AUTO, QUEUE_POSTFIX, QUEUE_EXIM, QUEUE_OPENSMTPD, QUEUE_SENDMAIL, QUEUE_FILES };

/* "auto", "postfix", ... (case ignored); -1 for anything else. */
int queue_format_parse(const char *name, enum queue_format *out);
const char *queue_format_name(enum queue_format f);

struct queue;

/* A queue at path in the given format. Touches nothing on disk. */
struct queue *queue_new(const char *path, enum queue_format fmt);
void queue_free(struct queue *q);

/* Looks at the directory now: 0 when it exists and is usable, 1 when it does not exist
 * yet (it may appear later: counted as 0 until then), -1 for a setting that cannot
 * work (not a directory, a Postfix log directory named as a queue), with the reason
 * in err. */
int queue_check(struct queue *q, char *err, size_t errlen);

/* The format in use (QUEUE_AUTO until auto has decided) and what was recognised, as
 * words for a user: "postfix queue root", "exim input directory", ... ("" before). */
enum queue_format queue_format(const struct queue *q);
const char *queue_path(const struct queue *q);
const char *queue_layout(const struct queue *q);

/* The number of queued messages, from directory entries only. A missing directory
 * counts 0. */
uint64_t queue_count(struct queue *q);

/* One queued message as read by queue_scan. id: the value of its X-Mailsoak-Id header,
 * without surrounding blanks (NULL: none, or the file could not be read). rcpts: the
 * recipients still to be delivered, nrcpts of them, when the layout tells
 * (rcpts_known); addresses without angle brackets. */
struct queue_msg {
    const char *id;
    size_t idlen;
    const char *const *rcpts;
    size_t nrcpts;
    int rcpts_known;
};
typedef void (*queue_msg_fn)(void *ctx, const struct queue_msg *m);

struct queue_totals {
    uint64_t messages;          /* queued messages seen by the scan */
    uint64_t recipients;        /* their recipients still to deliver, where known */
    uint64_t no_recipients;     /* messages whose layout does not tell recipients */
    uint64_t with_id;           /* messages carrying an X-Mailsoak-Id */
    uint64_t unreadable;        /* messages that could not be opened or parsed */
};

/* Opens every queued message, calls fn for each (fn may be NULL) and adds to t. A
 * message that vanishes between listing and opening (delivered meanwhile) is skipped. */
void queue_scan(struct queue *q, queue_msg_fn fn, void *ctx, struct queue_totals *t);

#endif
