# netns_lib.sh: sourced (after lib.sh) by tests that need two hosts on one machine:
# two network namespaces joined by a veth pair, with addresses from 198.18.0.0/15
# (RFC 2544's benchmark range). Neither namespace has a route out: each knows only
# its end of the link (and its own loopback), so nothing leaves them. Processes
# started with ns_bg are stopped by PID, then the namespaces are removed (which
# removes the veth pair), on any exit, failures included.

NS_SRV=mssrv$$ NS_LOAD=msload$$
VETH_SRV=mvs$$ VETH_LOAD=mvl$$          # interface names: at most 15 characters
SRV_ADDR=198.18.0.1 LOAD_ADDR=198.18.0.2
NS_PIDS=()
NS_MADE=0

ns_cleanup() {
    local pid
    ns_net_down
    for pid in "${NS_PIDS[@]}"; do
        kill -TERM "$pid" 2>/dev/null
    done
    for pid in "${NS_PIDS[@]}"; do
        stop_pid "$pid"
        wait "$pid" 2>/dev/null
    done
    NS_PIDS=()
    if ((NS_MADE)); then
        ip netns del "$NS_SRV" 2>/dev/null
        ip netns del "$NS_LOAD" 2>/dev/null
        ip link del "$VETH_SRV" 2>/dev/null   # only if a failure left it outside
        NS_MADE=0
    fi
}
# lib.sh's cleanup stops the testbed (by its pid files) and removes WORK; the
# namespaces go first so that nothing holds WORK open.
trap 'ns_cleanup; cleanup' EXIT

# ns_up: creates both namespaces and the link; skips (77) where the kernel cannot.
ns_up() {
    need_root
    command -v ip >/dev/null || { echo "skip: needs ip (iproute2)" >&2; exit 77; }
    if ! ip netns add "$NS_SRV" 2>"$WORK/netns.err"; then
        echo "skip: cannot create a network namespace: $(cat "$WORK/netns.err")" >&2
        exit 77
    fi
    NS_MADE=1
    ip netns add "$NS_LOAD" &&
        ip link add "$VETH_SRV" type veth peer name "$VETH_LOAD" &&
        ip link set "$VETH_SRV" netns "$NS_SRV" &&
        ip link set "$VETH_LOAD" netns "$NS_LOAD" &&
        ip -n "$NS_SRV" addr add "$SRV_ADDR/30" dev "$VETH_SRV" &&
        ip -n "$NS_LOAD" addr add "$LOAD_ADDR/30" dev "$VETH_LOAD" &&
        ip -n "$NS_SRV" link set lo up && ip -n "$NS_LOAD" link set lo up &&
        ip -n "$NS_SRV" link set "$VETH_SRV" up && ip -n "$NS_LOAD" link set "$VETH_LOAD" up ||
        { echo "FAIL: cannot set up the veth pair between $NS_SRV and $NS_LOAD"; exit 1; }
    local ns
    for ns in "$NS_SRV" "$NS_LOAD"; do
        if ip -n "$ns" route show | grep -q '^default'; then
            echo "FAIL: namespace $ns has a default route"
            exit 1
        fi
    done
}

in_srv() { ip netns exec "$NS_SRV" "$@"; }
in_load() { ip netns exec "$NS_LOAD" "$@"; }

# ns_bg VAR NS CMD...: starts CMD in namespace NS in the background, its PID in VAR
# (stopped by ns_cleanup). ip netns exec execs the command, so the PID is its own.
ns_bg() {
    local var=$1 ns=$2
    shift 2
    ip netns exec "$ns" "$@" &
    NS_PIDS+=("$!")
    printf -v "$var" '%s' "$!"
}

# ns_stop PID: stops one process started by ns_bg (SIGTERM, then waits); its exit status.
ns_stop() {
    local pid=$1 rc=0 keep=() p
    stop_pid "$pid"
    wait "$pid" || rc=$?
    for p in "${NS_PIDS[@]}"; do [[ $p == "$pid" ]] || keep+=("$p"); done
    NS_PIDS=("${keep[@]}")
    return "$rc"
}

# ---- several hosts on one bridge ----
# ns_net_up NAME=ADDR...: a namespace per NAME, each with an interface eth0 at
# ADDR/24, all plugged into one bridge that lives in a namespace of its own (the
# switch): this machine's own namespace gets no interface, no address, no route, and
# no namespace has a route out. ns_cleanup stops whatever still runs in them (by
# the PIDs `ip netns pids` lists: only what the test started can be in them) and
# removes them, on any exit.
NS_NET=()

ns_net_up() {
    need_root
    command -v ip >/dev/null || { echo "skip: needs ip (iproute2)" >&2; exit 77; }
    local sw=mssw$$ spec name i=0
    if ! ip netns add "$sw" 2>"$WORK/netns.err"; then
        echo "skip: cannot create a network namespace: $(cat "$WORK/netns.err")" >&2
        exit 77
    fi
    NS_NET+=("$sw")
    ip -n "$sw" link add br0 type bridge && ip -n "$sw" link set br0 up ||
        { echo "FAIL: cannot make a bridge in $sw"; exit 1; }
    for spec in "$@"; do
        name=${spec%%=*}
        ip netns add "$name" || { echo "FAIL: cannot create namespace $name"; exit 1; }
        NS_NET+=("$name")
        ip -n "$sw" link add "p$i" type veth peer name eth0 netns "$name" &&
            ip -n "$sw" link set "p$i" master br0 up &&
            ip -n "$name" addr add "${spec#*=}/24" dev eth0 &&
            ip -n "$name" link set lo up && ip -n "$name" link set eth0 up ||
            { echo "FAIL: cannot plug $name into the bridge"; exit 1; }
        if ip -n "$name" route show | grep -q '^default'; then
            echo "FAIL: namespace $name has a default route"
            exit 1
        fi
        i=$((i + 1))
    done
}

ns_net_down() {
    local ns pid pids=() i
    for ns in "${NS_NET[@]}"; do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do
            pids+=("$pid")
            kill -TERM "$pid" 2>/dev/null
        done
    done
    for pid in "${pids[@]}"; do
        stop_pid "$pid"
    done
    # the hosts first: deleting a namespace deletes its end of a veth pair, and so the pair
    for ((i = ${#NS_NET[@]} - 1; i >= 0; i--)); do
        ip netns del "${NS_NET[i]}" 2>/dev/null
    done
    NS_NET=()
}
