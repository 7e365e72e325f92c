#!/usr/bin/env bash
# t_shards_exit.sh: scripts/shards exits with the worse status in the gates' order,
# not the larger: an integrity failure (4) is not hidden by a quality-of-service
# failure (5), and a shard that did not finish (1) is worse than either. The shards
# run here, through pdsh's exec module with a prefix (`env`), and a stand-in for
# mailsoak exits with the status each case gives it: no network, no server.
source "$(dirname "$0")/lib.sh"
command -v pdsh >/dev/null || { echo "skip: needs pdsh" >&2; exit 77; }

# The stand-in: run writes its --json and exits SHARD<K>_RC; merge writes -o and
# exits MERGE_RC; compare prints nothing.
cat >"$WORK/fake" <<'FAKE'
#!/usr/bin/env bash
cmd=$1; shift
json="" out="" shard=""
while (($#)); do
    case $1 in
    --json) json=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    --shard) shard=$2; shift 2 ;;
    *) shift ;;
    esac
done
case $cmd in
run) echo '{}' >"$json"; v=SHARD${shard%%/*}_RC; exit "${!v:-0}" ;;
merge) echo '{}' >"$out"; exit "${MERGE_RC:-0}" ;;
esac
exit 0
FAKE
chmod +x "$WORK/fake"

# case SHARD0 SHARD1 MERGE EXPECTED WHY
case_() {
    local out
    out=$(SHARD0_RC=$1 SHARD1_RC=$2 MERGE_RC=$3 "$TOP/scripts/shards" --hosts h0,h1 --reach 'env SHARD_HOST=%h' \
        --mailsoak "$WORK/fake" --remote-dir "$WORK" --out "$WORK/out-$1-$2-$3" -- --duration 1s 2>&1)
    check "shards $1 and $2, merge $3: exit $4 ($5)" eq "$?" "$4" || echo "$out" | sed 's/^/    | /'
}
case_ 0 0 0 0 "all passed"
case_ 4 5 4 4 "integrity before quality of service"
case_ 4 5 5 4 "a shard's integrity failure the merge did not see"
case_ 5 0 5 5 "quality of service alone"
case_ 0 4 4 4 "an integrity failure"
case_ 1 5 5 1 "a shard that did not finish"
case_ 0 0 2 2 "the merge refused"
finish
