/* smtp: the reference server's SMTP (and LMTP) sessions (smtp.c). */
#ifndef MS_SERVER_SMTP_H
#define MS_SERVER_SMTP_H

struct srv;

/* Called by the listener for each accepted descriptor. */
void srv_smtp_accept(struct srv *srv, int fd);

#endif
