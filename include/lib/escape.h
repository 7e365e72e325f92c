/* escape: writing untrusted strings (labels, config values, log lines from result
 * files) into HTML, CSV and Markdown without changing their structure. */
#ifndef MS_LIB_ESCAPE_H
#define MS_LIB_ESCAPE_H

#include <stdio.h>

/* Escapes & < > " ' so the text is safe both in element content and in quoted attributes. */
void html_puts(FILE *f, const char *s);
/* Control bytes as \xNN (lib/printable.h), then quotes the field when it holds a
 * comma or a quote (RFC 4180). */
void csv_puts(FILE *f, const char *s);
/* A Markdown table cell: folds newlines, control bytes as \xNN, escapes | and the
 * emphasis characters. */
void md_puts(FILE *f, const char *s);

#endif
