/* imap: the IMAP reader sessions (readers.protocol = imap), a non-blocking IMAP
 * client state machine (imap.c, reading responses with imap_parse.c), walked by
 * the worker through its session_ops. */
#ifndef MS_ENGINE_IMAP_H
#define MS_ENGINE_IMAP_H

#include "engine/session.h"

extern const struct session_ops imap_ops;

#endif
