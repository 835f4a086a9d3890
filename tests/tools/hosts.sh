#!/bin/sh
# Emulated hosts: network namespaces joined by a bridge, one veth each.
#
#   hosts.sh up N       make hosts lmpi-h0 .. lmpi-h(N-1) at 10.77.0.1 .. N/24;
#                       this machine reaches them at 10.77.0.254 (bridge lmpibr0)
#   hosts.sh down       remove them (and every process still inside)
#   hosts.sh exec HOST CMD...
#                       run CMD on HOST as ssh would (a launcher-exec for
#                       mpiexec --launcher-exec and mpiexec.hydra -launcher-exec):
#                       CMD's words are joined and run by sh, inside HOST's namespace
#   hosts.sh check      exit 0 when namespaces can be made here, 77 (skip) otherwise
#
# The namespaces share the file system and the process table with this
# machine, except /etc/hosts: `ip netns exec` shows each /etc/netns/<ns>/hosts,
# which names every emulated host (as a cluster's hosts resolve each other).
# The network stack (their own lo, and eth0 on the bridge), the host name and
# /dev/shm (a directory of a tmpfs at $SHM, shared by the commands on that
# host) are each host's own: what MPI libraries look at to tell hosts apart,
# and what keeps shared memory inside a host.
set -u
PREFIX=lmpi-h
BR=lmpibr0
SHM=/run/lmpi-hosts # each host's /dev/shm: SHM/<host>

ns_of() {
    case "$1" in
    "$PREFIX"[0-9]*) echo "$1" ;;
    10.77.0.*) echo "$PREFIX$((${1##*.} - 1))" ;;
    *) echo "hosts.sh: '$1' is not an emulated host ($PREFIX<i> or 10.77.0.<i+1>)" >&2; exit 255 ;;
    esac
}

down() {
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$PREFIX[0-9]"); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
        ip netns del "$ns" 2>/dev/null
    done
    # veth ends whose namespace went away vanish with it, but not at once
    for v in $(ip -o link show 2>/dev/null | sed -n "s/^[0-9]*: \(v$PREFIX[0-9]*\)[@:].*/\1/p"); do
        ip link del "$v" 2>/dev/null
    done
    ip link del "$BR" 2>/dev/null
    rm -rf /etc/netns/"$PREFIX"[0-9]*
    umount "$SHM" 2>/dev/null
    rm -rf "$SHM"
    return 0
}

check() {
    if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null 2>&1; then
        echo "SKIP: emulated hosts need root and iproute2 (ip netns)"
        exit 77
    fi
    if ! ip netns add lmpi-probe 2>/dev/null; then
        echo "SKIP: this machine cannot make network namespaces (ip netns add failed)"
        exit 77
    fi
    ip netns del lmpi-probe
}

up() {
    n=$1
    check >/dev/null || check
    down
    ip link add "$BR" type bridge || exit 1
    ip addr add 10.77.0.254/24 dev "$BR"
    ip link set "$BR" up
    i=0
    while [ "$i" -lt "$n" ]; do
        ns=$PREFIX$i
        ip netns add "$ns" || exit 1
        ip link add "v$ns" type veth peer name eth0 netns "$ns" || exit 1
        ip link set "v$ns" master "$BR" up
        ip -n "$ns" addr add "10.77.0.$((i + 1))/24" dev eth0
        ip -n "$ns" link set lo up
        ip -n "$ns" link set eth0 up
        i=$((i + 1))
    done
    mkdir -p "$SHM" && mount -t tmpfs -o mode=755 lmpi-hosts "$SHM" || exit 1
    i=0
    while [ "$i" -lt "$n" ]; do
        mkdir -p "/etc/netns/$PREFIX$i"
        {
            echo "127.0.0.1 localhost"
            j=0
            while [ "$j" -lt "$n" ]; do
                echo "10.77.0.$((j + 1)) $PREFIX$j"
                j=$((j + 1))
            done
        } >"/etc/netns/$PREFIX$i/hosts"
        mkdir -p "$SHM/$PREFIX$i" && chmod 1777 "$SHM/$PREFIX$i"
        i=$((i + 1))
    done
}

case "${1:-}" in
up) up "${2:?hosts.sh up N}" ;;
down) down ;;
check) check ;;
exec)
    shift
    ns=$(ns_of "${1:?hosts.sh exec HOST CMD}") || exit 255
    shift
    # its own host name (UTS namespace) and its own /dev/shm (mount and IPC
    # namespaces): MPI libraries tell hosts apart by name, and shared memory
    # must not reach from one emulated host into another; every command on
    # a host sees the same /dev/shm (a job and the jobs it spawns there)
    [ -d "$SHM/$ns" ] || { echo "hosts.sh: host $ns is not up" >&2; exit 255; }
    exec ip netns exec "$ns" unshare --uts --ipc --mount --propagation private \
        sh -c 'hostname "$0" && mount --bind "$1" /dev/shm && exec sh -c "$2"' "$ns" "$SHM/$ns" "$*"
    ;;
*)
    sed -n '2,16p' "$0"
    exit 2
    ;;
esac
