/* version: the one place the version is compiled in, so that a new commit rebuilds
 * this file alone (the Makefile passes MAILSOAK_VERSION to it and to nothing else). */
#include "lib/version.h"

#ifndef MAILSOAK_VERSION
#define MAILSOAK_VERSION "unknown"
#endif

const char mailsoak_version[] = MAILSOAK_VERSION;
