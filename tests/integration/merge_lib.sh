# merge_lib.sh: checks of a merged result file, shared by t_shard.sh and
# t_multihost.sh. Each returns non-zero (with the reason on stderr) when it fails.

# ledger_reconciles FILE: every accepted message has exactly one outcome.
ledger_reconciles() {
    jq -e '.summary | .sent == (.delivered + .duplicated + .corrupted + .lost + .pending)' "$1" >/dev/null \
        || { jq -c '.summary | {sent, delivered, duplicated, corrupted, lost, pending}' "$1" >&2; return 1; }
}

# sums_match MERGED KEY SHARD...: the merged summary's KEY is the sum of the shards'.
sums_match() {
    local merged=$1 key=$2 got want
    shift 2
    got=$(jq --arg k "$key" '.summary[$k]' "$merged")
    want=$(jq -s --arg k "$key" 'map(.summary[$k]) | add' "$@")
    [[ $got == "$want" ]] || { echo "     summary.$key: merged $got, shards add up to $want" >&2; return 1; }
}

# percentiles_match MERGED SHARD...: for every command, the merged percentiles are
# those hist_percentiles.jq computes from the shards' buckets (10 significant
# digits: the files' precision).
percentiles_match() {
    local merged=$1 cmd want got n=0
    shift
    for cmd in $(jq -r '.summary.latency | keys[]' "$merged"); do
        want=$(jq -s -c --arg cmd "$cmd" -f "$TOP/tests/integration/hist_percentiles.jq" "$@") || return 1
        got=$(jq -c --arg cmd "$cmd" '.summary.latency[$cmd] | {count, p50, p90, p99, p999, max}' "$merged")
        jq -n -e --argjson a "$want" --argjson b "$got" \
            '[$a | to_entries[] | .key as $k | (.value - $b[$k]) | fabs <= 1e-9 * ($b[$k] | fabs) + 1e-12] | all' \
            >/dev/null || { echo "     latency $cmd: merged $got, from the shards' buckets $want" >&2; return 1; }
        n=$((n + 1))
    done
    ((n > 0)) || { echo "     no latency in $merged" >&2; return 1; }
}
