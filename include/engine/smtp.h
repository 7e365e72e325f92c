/* smtp: the sender sessions, a non-blocking SMTP (or LMTP) client state machine (smtp.c),
 * walked by the worker through its session_ops. */
#ifndef MS_ENGINE_SMTP_H
#define MS_ENGINE_SMTP_H

#include "engine/session.h"

extern const struct session_ops smtp_ops;

#endif
