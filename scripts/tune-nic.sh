#!/usr/bin/env bash
# Tunes a receive NIC for shreds: usage tune-nic.sh IFACE PORTS CORES
#   IFACE  the interface receiving turbine / shredstream traffic (e.g. eth1)
#   PORTS  comma-separated UDP destination ports (e.g. 8001,20000)
#   CORES  comma-separated cores of the receive threads, one per RX queue (e.g. 2,3)
# What it does (each step is skipped with a note when the driver does not support it):
#   - as many combined RX queues as receive cores, and each queue's IRQ pinned to its core;
#   - ntuple rules steering the shred ports round-robin to those queues (RSS would otherwise mix
#     them with other traffic);
#   - GRO/LRO off (datagrams must arrive one per shred), larger RX rings;
#   - socket buffer ceilings raised for the plain-UDP fallback (64 MiB).
# Run as root; idempotent.
set -euo pipefail
iface=${1:?interface}
ports=${2:?ports}
cores=${3:?cores}
IFS=, read -r -a port_list <<<"$ports"
IFS=, read -r -a core_list <<<"$cores"
queues=${#core_list[@]}

note() { echo "tune-nic: $*"; }
try() { "$@" 2>/dev/null || note "skipped (unsupported): $*"; }

try ethtool -L "$iface" combined "$queues"
try ethtool -K "$iface" gro off lro off
try ethtool -G "$iface" rx 4096
try ethtool -K "$iface" ntuple on
for index in "${!port_list[@]}"; do
    queue=$((index % queues))
    try ethtool -N "$iface" flow-type udp4 dst-port "${port_list[$index]}" action "$queue"
done
# Pin each RX queue's interrupt to its receive core.
for queue in $(seq 0 $((queues - 1))); do
    core=${core_list[$queue]}
    for irq in $(grep -E "${iface}[-_](rx|TxRx|txrx)?-?${queue}\$" /proc/interrupts | cut -d: -f1); do
        echo "$core" >"/proc/irq/${irq// /}/smp_affinity_list" || note "could not pin IRQ $irq"
    done
done
sysctl -q -w net.core.rmem_max=$((64 << 20)) net.core.rmem_default=$((8 << 20))
sysctl -q -w net.core.netdev_max_backlog=250000
note "done: $iface, ports $ports, queues $queues on cores $cores"
