/* fill_file: the fill's JSON, written by --fill-only and read by fill.from. */
#include "run/fill_file.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/results.h"
#include "result/run_json.h"

int fill_write_json(const char *path, const struct fill_summary *fs, const struct users *u, const struct known *k,
                    char *err, size_t errlen)
{
    json_t *known = json_object();
    for (size_t i = 0; k->box && i < u->n && i < k->nusers; i++) {
        if (!k->box[i].n)
            continue;
        json_t *a = json_array();
        for (uint32_t j = 0; j < k->box[i].n; j++) {
            char hex[24];
            snprintf(hex, sizeof hex, "%016" PRIx64, k->box[i].k[j]);
            json_array_append_new(a, json_string(hex));
        }
        json_object_set_new(known, u->v[i].addr, a);
    }
    json_t *fj = fill_json(fs);
    json_object_del(fj, "from");
    json_t *root = json_pack("{s:s, s:o, s:o}", "format", "mailsoak-fill", "fill", fj, "known", known);
    int rc = write_json_atomic(path, root, err, errlen);
    json_decref(root);
    return rc;
}

static uint64_t num(const json_t *o, const char *key)
{
    return (uint64_t)json_integer_value(json_object_get(o, key));
}

int fill_read_json(const char *path, struct fill_summary *fs, const struct users *u, struct known *k, char *err,
                   size_t errlen)
{
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        snprintf(err, errlen, "%s: %s", path, je.text);
        return -1;
    }
    const json_t *f = json_object_get(root, "fill"), *kn = json_object_get(root, "known");
    const char *fmt = json_string_value(json_object_get(root, "format"));
    const char *id = json_string_value(json_object_get(f, "run_id"));
    if (!fmt || strcmp(fmt, "mailsoak-fill") || !json_is_object(kn) || !id || strlen(id) != MSG_RUNID_LEN) {
        snprintf(err, errlen, "%s: not the --json of a --fill-only run", path);
        json_decref(root);
        return -1;
    }
    memset(fs, 0, sizeof *fs);
    fs->on = 1;
    memcpy(fs->run_id, id, sizeof fs->run_id);
    fs->mailboxes = num(f, "mailboxes");
    fs->planned = num(f, "planned");
    fs->accepted = num(f, "accepted");
    fs->verified = num(f, "verified");
    fs->duplicated = num(f, "duplicated");
    fs->missing = num(f, "missing");
    fs->unverified = num(f, "unverified");
    fs->bytes = num(f, "bytes");
    fs->deferrals = num(f, "deferrals");
    fs->errors = num(f, "errors");
    fs->foreign = num(f, "foreign");
    fs->elapsed_s = json_number_value(json_object_get(f, "elapsed_s"));
    fs->settled = json_is_true(json_object_get(f, "settled"));
    fs->from = path;
    if (known_init(k, u->n) < 0) {
        snprintf(err, errlen, "out of memory");
        json_decref(root);
        return -1;
    }
    const char *addr;
    json_t *keys;
    json_object_foreach((json_t *)kn, addr, keys) {
        long user = users_find(u, addr);
        if (user < 0)
            continue;                /* another shard's, or a user no longer listed */
        size_t i;
        json_t *v;
        json_array_foreach(keys, i, v) {
            const char *hex = json_string_value(v);
            char *end;
            uint64_t key = hex ? strtoull(hex, &end, 16) : 0;
            if (!hex || *end || !key) {
                snprintf(err, errlen, "%s: known.%s[%zu]: not a UID key", path, addr, i);
                known_free(k);
                json_decref(root);
                return -1;
            }
            known_add(k, (uint32_t)user, key);
        }
    }
    json_decref(root);
    return 0;
}
