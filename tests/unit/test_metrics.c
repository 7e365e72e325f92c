/* Unit tests of the Prometheus side: the exposition writer escapes label values and
 * writes histograms in Prometheus' shape, the bucket counts of a latency histogram
 * equal exact counts of the recorded values, and the HTTP endpoint (libmicrohttpd,
 * asked with libcurl) serves, refuses without the token, refuses other methods and
 * reports a bad or busy address. `promtool check metrics` judges whole expositions
 * in t_metrics.sh. */
#include <curl/curl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/hist.h"
#include "lib/httpd.h"
#include "lib/prom.h"
#include "lib/rng.h"
#include "run/metrics.h"

static void labels_escaped(void **st)
{
    struct prom p = { 0 };
    prom_family(&p, "x_total", "counter", "back\\slash\nnewline");
    prom_u64(&p, "x_total", 18446744073709551615ull, "class", "a\"b\\c\nd\x1b[31m\xff", "k", "v", NULL);
    prom_double(&p, "y", 0.25, NULL);
    size_t len;
    char *s = prom_take(&p, &len);
    assert_int_equal(len, strlen(s));
    assert_string_equal(s, "# HELP x_total back\\\\slash\\nnewline\n"
                           "# TYPE x_total counter\n"
                           "x_total{class=\"a\\\"b\\\\c\\nd?[31m?\",k=\"v\"} 18446744073709551615\n"
                           "y 0.25\n");
    free(s);
}

/* Names longer than any fixed buffer come out whole. */
static void long_names(void **st)
{
    char name[201];
    memset(name, 'n', 200);
    name[200] = 0;
    struct prom p = { 0 };
    prom_family(&p, name, "counter", "help");
    prom_u64(&p, name, 7, "k", name, NULL);
    size_t len;
    char *s = prom_take(&p, &len);
    char want[1200];
    snprintf(want, sizeof want, "# HELP %s help\n# TYPE %s counter\n%s{k=\"%s\"} 7\n", name, name, name, name);
    assert_string_equal(s, want);
    free(s);
}

static void histogram_shape(void **st)
{
    struct prom p = { 0 };
    const double le[] = { 0.001, 0.5 };
    const uint64_t cum[] = { 3, 7 };
    prom_histogram(&p, "h_seconds", "command", "smtp.mail", le, cum, 2, 1.5, 9);
    prom_histogram(&p, "g_seconds", NULL, NULL, le, cum, 2, 0, 7);
    size_t len;
    char *s = prom_take(&p, &len);
    assert_string_equal(s, "h_seconds_bucket{command=\"smtp.mail\",le=\"0.001\"} 3\n"
                           "h_seconds_bucket{command=\"smtp.mail\",le=\"0.5\"} 7\n"
                           "h_seconds_bucket{command=\"smtp.mail\",le=\"+Inf\"} 9\n"
                           "h_seconds_sum{command=\"smtp.mail\"} 1.5\n"
                           "h_seconds_count{command=\"smtp.mail\"} 9\n"
                           "g_seconds_bucket{le=\"0.001\"} 3\n"
                           "g_seconds_bucket{le=\"0.5\"} 7\n"
                           "g_seconds_bucket{le=\"+Inf\"} 7\n"
                           "g_seconds_sum 0\n"
                           "g_seconds_count 7\n");
    free(s);
}

/* Values kept away from the bounds (more than 1 % off) count exactly; the bound's
 * own bucket decides by its midpoint, like the percentiles. */
static void buckets_exact(void **st)
{
    const double le[] = { 0.0001, 0.001, 0.01, 0.1, 1, 10 };
    enum { N = 50000, NLE = sizeof le / sizeof le[0] };
    struct hist *h = calloc(1, sizeof *h);
    uint64_t want[NLE] = { 0 }, got[NLE];
    struct rng r;
    rng_seed(&r, 3);
    for (int i = 0; i < N; i++) {
        double s = exp(log(1e-5) + rng_unit(&r) * (log(20) - log(1e-5)));
        int near = 0;
        for (int k = 0; k < NLE; k++)
            near |= s > le[k] * 0.99 && s < le[k] * 1.01;
        if (near)
            continue;
        hist_record(h, (uint64_t)(s * 1e9));
        for (int k = 0; k < NLE; k++)
            want[k] += s <= le[k];
    }
    metrics_buckets(h, le, NLE, got);
    for (int k = 0; k < NLE; k++)
        assert_int_equal(got[k], want[k]);
    assert_true(want[0] > 0 && want[NLE - 1] < h->count);   /* both ends exercised */
    free(h);
}

struct fetched {
    char body[8192];
    size_t len;
};

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    struct fetched *f = ud;
    size_t k = sz * n, room = sizeof f->body - 1 - f->len;
    memcpy(f->body + f->len, p, k < room ? k : room);
    f->len += k < room ? k : room;
    f->body[f->len] = 0;
    return k;
}

/* GET (or another method) of url with an optional bearer token: the status. */
static long fetch(const char *url, const char *method, const char *token, struct fetched *f)
{
    CURL *c = curl_easy_init();
    struct curl_slist *h = NULL;
    char auth[128];
    memset(f, 0, sizeof *f);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, f);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 5L);
    if (method)
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (token) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
        h = curl_slist_append(h, auth);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    }
    long status = -1;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return status;
}

static void echo(void *ud, const char *path, const struct httpd_request *req, struct httpd_response *out)
{
    const char *since = httpd_arg(req, "since");
    char b[256];
    snprintf(b, sizeof b, "%s %s since=%s", (const char *)ud, path, since ? since : "-");
    out->body = strdup(b);
    out->len = strlen(b);
}

static void http_endpoint(void **st)
{
    char err[256], url[256];
    struct fetched f;
    struct httpd *h = httpd_start("127.0.0.1:0", "s3cret", echo, "hello", err, sizeof err);
    assert_non_null(h);
    assert_true(!strncmp(httpd_address(h), "127.0.0.1:", 10) && strcmp(httpd_address(h), "127.0.0.1:0"));
    snprintf(url, sizeof url, "http://%s/samples?since=42", httpd_address(h));
    assert_int_equal(fetch(url, NULL, "s3cret", &f), 200);
    assert_string_equal(f.body, "hello /samples since=42");
    assert_int_equal(fetch(url, NULL, NULL, &f), 401);
    assert_int_equal(fetch(url, NULL, "s3cre", &f), 401);
    assert_int_equal(fetch(url, NULL, "s3cret!", &f), 401);
    assert_int_equal(fetch(url, "POST", "s3cret", &f), 405);

    /* the same port again: taken, and said so */
    struct httpd *h2 = httpd_start(httpd_address(h), NULL, echo, "x", err, sizeof err);
    assert_null(h2);
    assert_non_null(strstr(err, "Address already in use"));
    httpd_stop(h);

    assert_null(httpd_start("localhost:80", NULL, echo, "x", err, sizeof err));
    assert_non_null(strstr(err, "not a numeric address"));
    assert_null(httpd_start("127.0.0.1:99999", NULL, echo, "x", err, sizeof err));
    assert_non_null(strstr(err, "expected ADDR:PORT"));

    /* IPv6, and no token needed when none is set */
    h = httpd_start("[::1]:0", "", echo, "six", err, sizeof err);
    if (h) {                         /* a machine without IPv6 cannot test it */
        assert_true(!strncmp(httpd_address(h), "[::1]:", 6));
        snprintf(url, sizeof url, "http://%s/x", httpd_address(h));
        assert_int_equal(fetch(url, NULL, NULL, &f), 200);
        assert_string_equal(f.body, "six /x since=-");
        httpd_stop(h);
    }
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(labels_escaped),
        cmocka_unit_test(long_names),
        cmocka_unit_test(histogram_shape),
        cmocka_unit_test(buckets_exact),
        cmocka_unit_test(http_endpoint),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
