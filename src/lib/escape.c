/* escape: the three quoting rules the outputs need; kept together so every writer
 * of a label or a config value goes through one of them. CSV and Markdown are read
 * on terminals too, so those two also pass the text through printable(). */
#include "lib/escape.h"

#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/printable.h"

void html_puts(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f); break;
        }
    }
}

/* Control bytes (a CR or LF among them) become \xNN first: a cell never breaks a
 * row, and a CSV shown with cat cannot drive the terminal. */
void csv_puts(FILE *f, const char *s)
{
    if (!s)
        return;
    char *p = printable_dup(s, strlen(s));
    int quoted = p[strcspn(p, ",\"")] != 0;
    if (quoted)
        fputc('"', f);
    for (const char *c = p; *c; c++) {
        if (*c == '"')
            fputc('"', f);
        fputc(*c, f);
    }
    if (quoted)
        fputc('"', f);
    free(p);
}

void md_puts(FILE *f, const char *s)
{
    if (!s)
        return;
    char *folded = xstrdup(s);
    for (char *c = folded; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    char *p = printable_dup(folded, strlen(folded));
    for (const char *c = p; *c; c++) {
        if (strchr("|\\*_`[]<>", *c))
            fputc('\\', f);
        fputc(*c, f);
    }
    free(p);
    free(folded);
}
