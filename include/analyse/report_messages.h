/* report_messages: the report's section of the messages each run showed one by one:
 * lost, duplicated and corrupted with their trails in the server's logs, a line per
 * run with pending messages, and the late ones apart. */
#ifndef MS_ANALYSE_REPORT_MESSAGES_H
#define MS_ANALYSE_REPORT_MESSAGES_H

#include <stdio.h>

#include "analyse/results.h"

void report_messages(FILE *o, const struct result_set *rs);

#endif
