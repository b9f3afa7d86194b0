#!/usr/bin/env bash
# Receive-path saturation on a veth pair: shred_sender (sendmmsg, N threads, as fast as it can)
# in namespace A; `appliance run` in namespace B over batched UDP, AF_XDP generic (skb) and
# AF_XDP native; packets/s read from the appliance's /metrics counters over the send window.
# Usage (as root, from the workspace root, after
#   cargo build --release -p appliance -p bench --bin appliance --bin shred_sender):
#   bench/scripts/receive_saturation.sh [SECONDS=5] [THREADS=2] [JUNK=1.0] [RUNS=2]
# JUNK=1.0 sends only junk (rejected at the shred parse: the receive path dominates); JUNK=0
# loops the real captures through the whole decoder.
set -euo pipefail
seconds=${1:-5}
threads=${2:-2}
junk=${3:-1.0}
runs=${4:-2}
bin=target/release
a=satA$$
b=satB$$
http=18099
app=
cleanup() {
    [ -n "$app" ] && kill "$app" 2>/dev/null && wait "$app" 2>/dev/null || true
    ip netns del "$a" 2>/dev/null || true
    ip netns del "$b" 2>/dev/null || true
}
trap cleanup EXIT
ip netns add "$a"
ip netns add "$b"
ip link add sa0 numtxqueues 1 numrxqueues 1 netns "$a" type veth \
    peer name sb0 numtxqueues 1 numrxqueues 1 netns "$b"
ip -n "$b" link set sb0 address 02:00:c6:12:00:02
ip -n "$a" addr add 198.18.0.1/24 dev sa0
ip -n "$b" addr add 198.18.0.2/24 dev sb0
for ns in "$a" "$b"; do ip -n "$ns" link set lo up; done
ip -n "$a" link set sa0 up
ip -n "$b" link set sb0 up
ip -n "$a" neigh add 198.18.0.2 lladdr 02:00:c6:12:00:02 dev sa0 nud permanent

metrics() {
    ip netns exec "$b" bash -c "exec 3<>/dev/tcp/127.0.0.1/$http; \
        printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3; cat <&3"
}
total() { metrics | awk -v p="$1" 'index($0, p) == 1 { s += $NF } END { print s + 0 }'; }

for case in udp xdp-skb xdp-native; do
    case $case in
        udp) args=(--udp 0.0.0.0:8001) ;;
        xdp-skb) args=(--xdp sb0:8001 --xdp-attach skb) ;;
        xdp-native) args=(--xdp sb0:8001 --xdp-attach native) ;;
    esac
    ip netns exec "$b" "$bin/appliance" run "${args[@]}" --grpc 127.0.0.1:19099 \
        --http "127.0.0.1:$http" >/dev/null 2>&1 &
    app=$!
    until metrics >/dev/null 2>&1; do sleep 0.2; done
    for run in $(seq "$runs"); do
        received_before=$(total appliance_receive_packets_total)
        drops_before=$(total appliance_receive_drops_total)
        sent=$(ip netns exec "$a" "$bin/shred_sender" --target 198.18.0.2:8001 \
            --file appliance/replay/slot-361200000.full.bin \
            --file appliance/replay/slot-361200002.full.bin \
            --threads "$threads" --duration "$seconds" --junk "$junk")
        sleep 0.5
        received=$(( $(total appliance_receive_packets_total) - received_before ))
        drops=$(( $(total appliance_receive_drops_total) - drops_before ))
        echo "$case run $run: received $((received / seconds)) pps, drops $drops, sender $sent"
        metrics | awk '/^appliance_receive_drops_total/ && $NF != 0 { print "  cumulative " $0 }'
    done
    kill -TERM "$app"
    wait "$app" || true
    app=
done
