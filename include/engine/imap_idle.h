/* imap_idle: the idle model's sessions, one per idle user, held in IDLE on INBOX
 * (imap_idle.c); its functions are declared with the session they work on, in
 * engine/imap_session.h; how many users idle, in settings/config.h
 * (imap_idle_users). */
#ifndef MS_ENGINE_IMAP_IDLE_H
#define MS_ENGINE_IMAP_IDLE_H

#include "engine/imap_session.h"

#endif
