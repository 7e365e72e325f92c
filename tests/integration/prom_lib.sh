# prom_lib.sh: sourced by tests that check what the docs tell Prometheus users: the
# first ```yaml block and the first ```promql block after a heading of a docs page
# must pass promtool (check config; each query as a recording rule, check rules).

# block PAGE HEADING LANG: the first ```LANG block of the section HEADING of PAGE (a
# path below the top of the tree; the section ends at the next heading outside a
# code block).
block() {
    awk -v h="$2" -v lang="$3" '$0 == h { s = 1; next } !s { next }
        /^```/ { if (f) exit; code = !code; if ($0 == "```" lang) f = 1; next }
        f { print; next } !code && /^#+ / { exit }' "$TOP/$1"
}

# docs_prometheus PAGE HEADING DIR: 0, or 1 with promtool's complaint on stdout.
docs_prometheus() {
    local page=$1 heading=$2 dir=$3 i=0 q
    block "$page" "$heading" yaml >"$dir/prometheus.yml"
    grep -q job_name "$dir/prometheus.yml" || { echo "no scrape config under '$heading' in $page"; return 1; }
    # a credentials_file is looked for beside the configuration, as Prometheus does
    sed -n 's/^ *credentials_file: *\([^ #]*\).*/\1/p' "$dir/prometheus.yml" | while read -r f; do
        [[ $f == /* ]] || echo secret >"$dir/$f"
    done
    promtool check config "$dir/prometheus.yml" >"$dir/promtool.txt" 2>&1 || { cat "$dir/promtool.txt"; return 1; }
    {
        printf 'groups:\n  - name: docs\n    rules:\n'
        while IFS= read -r q; do
            i=$((i + 1))
            printf '      - record: docs:query%d\n        expr: %s\n' "$i" "$(jq -Rn --arg q "$q" '$q')"
        done < <(block "$page" "$heading" promql)
    } >"$dir/rules.yml"
    ((i >= 5)) || { echo "fewer than 5 queries under '$heading' in $page"; return 1; }
    promtool check rules "$dir/rules.yml" >"$dir/promtool.txt" 2>&1 || { cat "$dir/rules.yml" "$dir/promtool.txt"; return 1; }
    echo "$i queries"
}
