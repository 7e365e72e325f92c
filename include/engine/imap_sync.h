/* imap_sync: a selected mailbox's listing, its bodies fetched and judged, ours
 * flagged deleted and expunged, the reads committed (imap_sync.c); its functions
 * are declared with the session they work on, in engine/imap_session.h. */
#ifndef MS_ENGINE_IMAP_SYNC_H
#define MS_ENGINE_IMAP_SYNC_H

#include "engine/imap_session.h"

#endif
