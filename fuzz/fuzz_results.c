/* fuzz_results: a result file as `mailsoak compare` and `mailsoak report` read it:
 * loaded twice (two runs, one label), then every table format and the HTML and CSV
 * reports written. Every key may be missing or of the wrong type. */
#include "fuzz.h"

#include "analyse/compare.h"
#include "analyse/compare_write.h"
#include "analyse/report.h"
#include "analyse/report_csv.h"
#include "analyse/results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *null;
    char path[64], err[600];
    if (!null)
        null = fopen("/dev/null", "w");
    int fd = fuzz_file(data, size, path, sizeof path);
    char *paths[2] = { path, path };
    struct result_set rs = { 0 };
    if (results_load(&rs, paths, 2, err, sizeof err) == 0) {
        (void)results_check_workload(&rs, err, sizeof err);
        struct cmp_table t;
        cmp_build(&t, &rs, NULL, 0);
        for (int f = CMP_TEXT; f <= CMP_JSON; f++)
            cmp_write(null, &t, (enum cmp_format)f, CMP_RUNS | CMP_MARK);
        cmp_free(&t);
        report_write_html(null, &rs, NULL, NULL, 0);
        report_write_csv(null, &rs);
    }
    results_free(&rs);
    close(fd);
    return 0;
}
