/* opts: table-driven settings. One table per program describes every key (section,
 * name, type, default, flag, help); the same table reads INI files (inih), applies
 * --flag and --set overrides, prints --help and echoes the effective config. */
#ifndef MS_OPTS_H
#define MS_OPTS_H

#include <stddef.h>
#include <stdio.h>

#include "lib/units.h"

enum opt_type {
    OPT_STR, OPT_SECRET,             /* char *; a secret prints as *** */
    OPT_COUNT,                       /* uint64_t, 1k = 1000 */
    OPT_BYTES,                       /* uint64_t, 1k = 1024 */
    OPT_DURATION,                    /* uint64_t nanoseconds */
    OPT_RANGE, OPT_BYTERANGE,        /* struct range */
    OPT_BOOL,                        /* int */
    OPT_DOUBLE,                      /* double */
    OPT_ENUM,                        /* int: index into choices */
    OPT_LIST,                        /* struct strlist: key may repeat */
    OPT_SHARD,                       /* struct shard: K/N */
    OPT_STAGES,                      /* struct rate_stages: DURATION@RATE, ... */
};

/* A repeated key appends; the first value from a later source (another -c file, the
 * command line) replaces what earlier sources gave. */
struct strlist {
    char **v;
    size_t n;
    int src;
};

struct opt {
    const char *section, *key;
    enum opt_type type;
    size_t off;
    const char *def;                 /* default, in the syntax a user would write; NULL = unset */
    const char *flag;                /* --flag for the command line, NULL = only --set */
    const char *help;
    /* What values are allowed, NULL-terminated: an OPT_ENUM's names; or a number's
     * bounds { MIN, MAX } in the key's own syntax, "" for no bound on that side (a
     * RANGE's low end must be at least MIN, its high end at most MAX). A value out of
     * bounds is refused where it is read, with file:line: key. */
    const char *const *choices;
};

/* The choices of an OPT_STR or OPT_LIST that is a path: a relative one read from a
 * file is taken against that file's directory, so a configuration means the same
 * from any directory; one from the command line stays the working directory's. */
extern const char *const opt_path[];
#define OPT_IS_PATH(o) ((o)->choices == opt_path)
/* The choices of an OPT_STR or OPT_LIST naming a server: HOST:PORT or [IPv6]:PORT,
 * PORT a number from 1 to 65535 or a service name; anything else is refused where
 * it is read. */
extern const char *const opt_hostport[];

int opts_defaults(const struct opt *t, void *base, char *err, size_t errlen);
/* 0 ok; -1 unknown key or bad value, with "key: reason" in err. */
int opts_set(const struct opt *t, void *base, const char *section, const char *key,
             const char *val, int src, char *err, size_t errlen);
/* "section.key=value"; err as above. */
int opts_set_dotted(const struct opt *t, void *base, const char *arg, int src, char *err, size_t errlen);
/* Reads an INI file; stops at the first problem with "file:line: key: reason". */
int opts_load_file(const struct opt *t, void *base, const char *path, int src, char *err, size_t errlen);
/* For programs with sections the table cannot describe (the server's [fault.*]):
 * a key of a section for which claim(section) is true goes to fn instead of the
 * table. fn returns 0, or -1 with "key: reason" in why. A key is a path when
 * is_path (may be NULL) says so: a relative one in a file is taken beside the
 * file, as the table's paths are. */
struct opts_extra {
    int (*claim)(const char *section);
    int (*fn)(void *ud, const char *section, const char *key, const char *val,
              char *why, size_t whylen);
    void *ud;
    int (*is_path)(const char *section, const char *key);
};
int opts_load_file_extra(const struct opt *t, void *base, const char *path, int src,
                         const struct opts_extra *extra, char *err, size_t errlen);
const struct opt *opts_find_flag(const struct opt *t, const char *flag);

/* A program's command line over its table: -c FILE (repeatable; every file is read
 * first, in order, so flags win), --FLAG VALUE or --FLAG=VALUE, --set
 * SECTION.KEY=VALUE (to `extra` when it claims the section: everything before the
 * last dot), -h/--help. Defaults are applied first. Returns 0; 1 after printing
 * the usage; 2 with the reason on stderr. */
struct opts_cli {
    const char *prog;                           /* prefix of messages */
    void (*usage)(FILE *f);
    const struct opts_extra *extra;             /* may be NULL */
    int (*bare)(void *base, const char *arg);   /* a flag without value it takes (1), or not (0) */
};
int opts_from_args(const struct opt *t, void *base, int argc, char **argv, const struct opts_cli *cli);
/* Prints a value as a user would write it (secrets as ***); lists joined by ", ". */
const char *opts_format(const struct opt *o, const void *base, char *buf, size_t n);
void opts_help(FILE *f, const struct opt *t);
/* An INI file with every key, commented out at its default, with its help. */
void opts_example(FILE *f, const struct opt *t);
void opts_free(const struct opt *t, void *base);
void strlist_add(struct strlist *l, const char *s);
void strlist_free(struct strlist *l);

#endif
