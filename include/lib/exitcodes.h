/* exitcodes: the one table of the exit statuses of mailsoak and mailsoak-server,
 * every command. mailsoak(1)'s EXIT STATUS and docs/verdict.md list the same; a
 * status means one kind of outcome whichever command gives it. */
#ifndef MS_EXITCODES_H
#define MS_EXITCODES_H

enum ms_exit {
    MS_EXIT_OK = 0,                  /* done; a run: every gate passed */
    MS_EXIT_FAILURE = 1,             /* a run-time failure: a result not written, an input not read */
    MS_EXIT_SETUP = 2,               /* bad settings or arguments (file:line: key: reason): nothing was run */
    MS_EXIT_PREFLIGHT = 3,           /* the preflight check found a target unusable: no load was sent */
    MS_EXIT_GATE_INTEGRITY = 4,      /* an integrity gate failed: mail lost, duplicated or corrupted, nothing
                                      * sent or read, not settled, too little proven, the server fell behind */
    MS_EXIT_GATE_QOS = 5,            /* only quality-of-service gates failed: latency, error share, error classes,
                                      * a spike's recovery */
    MS_EXIT_NOT_CONFIRMED = 6,       /* capacity: a rate was found, but its 80/100/120 % confirmation failed */
    MS_EXIT_SIGNAL = 128,            /* + N: ended early by signal N, the report still written */
};

#endif
