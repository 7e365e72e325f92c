/* pop3: the reference server's POP3 sessions (pop3.c). */
#ifndef MS_SERVER_POP3_H
#define MS_SERVER_POP3_H

struct srv;

/* Called by the listener for each accepted descriptor. */
void srv_pop3_accept(struct srv *srv, int fd);

#endif
