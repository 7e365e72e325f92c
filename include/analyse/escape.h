/* escape: writing untrusted strings (labels, config values, log lines from result
 * files) into HTML, CSV and Markdown without changing their structure. */
#ifndef MS_ESCAPE_H
#define MS_ESCAPE_H

#include <stdio.h>

/* Escapes & < > " ' so the text is safe both in element content and in quoted attributes. */
void html_puts(FILE *f, const char *s);
/* Quotes the field when it holds a comma, quote, CR or LF (RFC 4180). */
void csv_puts(FILE *f, const char *s);
/* A Markdown table cell: escapes | and the emphasis characters, folds newlines. */
void md_puts(FILE *f, const char *s);

#endif
