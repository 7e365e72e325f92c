# prom_lib.sh: sourced by tests that check what the README tells Prometheus users:
# the first ```yaml block and the first ```promql block after a heading must pass
# promtool (check config; each query as a recording rule, check rules).

# block HEADING LANG: the first ```LANG block of the README's section HEADING (which
# ends at the next heading outside a code block).
block() {
    awk -v h="$1" -v lang="$2" '$0 == h { s = 1; next } !s { next }
        /^```/ { if (f) exit; code = !code; if ($0 == "```" lang) f = 1; next }
        f { print; next } !code && /^#+ / { exit }' "$TOP/README.md"
}

# readme_prometheus HEADING DIR: 0, or 1 with promtool's complaint on stdout.
readme_prometheus() {
    local heading=$1 dir=$2 i=0 q
    block "$heading" yaml >"$dir/prometheus.yml"
    grep -q job_name "$dir/prometheus.yml" || { echo "no scrape config under '$heading'"; return 1; }
    # a credentials_file is looked for beside the configuration, as Prometheus does
    sed -n 's/^ *credentials_file: *\([^ #]*\).*/\1/p' "$dir/prometheus.yml" | while read -r f; do
        [[ $f == /* ]] || echo secret >"$dir/$f"
    done
    promtool check config "$dir/prometheus.yml" >"$dir/promtool.txt" 2>&1 || { cat "$dir/promtool.txt"; return 1; }
    {
        printf 'groups:\n  - name: readme\n    rules:\n'
        while IFS= read -r q; do
            i=$((i + 1))
            printf '      - record: readme:query%d\n        expr: %s\n' "$i" "$(jq -Rn --arg q "$q" '$q')"
        done < <(block "$heading" promql)
    } >"$dir/rules.yml"
    ((i >= 5)) || { echo "fewer than 5 queries under '$heading'"; return 1; }
    promtool check rules "$dir/rules.yml" >"$dir/promtool.txt" 2>&1 || { cat "$dir/rules.yml" "$dir/promtool.txt"; return 1; }
    echo "$i queries"
}
