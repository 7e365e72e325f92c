/* pop3: the reader sessions, a non-blocking POP3 client state machine (pop3.c),
 * walked by the worker through its session_ops. */
#ifndef MS_ENGINE_POP3_H
#define MS_ENGINE_POP3_H

#include "engine/session.h"

extern const struct session_ops pop3_ops;

#endif
