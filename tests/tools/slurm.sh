#!/bin/sh
# slurm.sh BUILD   LeanMPI programs launched by Slurm's srun --mpi=pmix (and
# --mpi=pmi2, whose server speaks PMI-1 and, with LMPI_PMI=2, PMI-2).
# Uses a running Slurm where sinfo answers; otherwise, as root with slurmctld,
# slurmd and munged installed (Debian: slurmd slurmctld munge), starts a
# one-node cluster of this machine under a private configuration and stops it
# at the end.  Skips (77) where neither is possible.
#   programs  pt2pt, collectives, communicators, RMA, datatypes, I/O
#   abort     MPI_Abort at one rank: its code is the step's status
#   refused   spawn and publish, which Slurm's PMIx server does not offer: a
#             clear MPI error naming the cause, not a hang
set -u
B=$1
T="$B/tests"
out=$(mktemp)
dir=""
cleanup() {
    rm -f "$out"
    if [ -n "$dir" ]; then
        [ -f "$dir/slurmd.pid" ] && kill "$(cat "$dir/slurmd.pid")" 2>/dev/null
        [ -f "$dir/slurmctld.pid" ] && kill "$(cat "$dir/slurmctld.pid")" 2>/dev/null
        [ -f "$dir/munged.pid" ] && kill "$(cat "$dir/munged.pid")" 2>/dev/null
        sleep 0.5
        rm -rf "$dir"
    fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE
command -v srun >/dev/null || { echo "SKIP: no srun (Debian: slurm-client slurmd slurmctld munge)"; exit 77; }

if ! timeout 10 sinfo >/dev/null 2>&1; then
    [ "$(id -u)" = 0 ] && command -v slurmctld >/dev/null && command -v slurmd >/dev/null &&
        command -v munged >/dev/null || { echo "SKIP: no running Slurm, and cannot start one"; exit 77; }
    dir=$(mktemp -d /tmp/lmpi-slurm.XXXXXX)
    chmod 755 "$dir"
    mkdir -p "$dir/ctld" "$dir/d" "$dir/munge"
    dd if=/dev/urandom of="$dir/munge/key" bs=1024 count=1 2>/dev/null
    chmod 400 "$dir/munge/key"
    /usr/sbin/munged --force --key-file="$dir/munge/key" --socket="$dir/munge/sock" \
        --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/seed" ||
        { echo "SKIP: munged does not start"; exit 77; }
    host=$(hostname -s)
    cpus=$(nproc)
    cat >"$dir/slurm.conf" <<CONF
ClusterName=lmpitest
SlurmctldHost=$host
AuthType=auth/munge
AuthInfo=socket=$dir/munge/sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/d
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ReturnToService=2
MpiDefault=none
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=lmpi Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
CONF
    echo "CgroupPlugin=cgroup/v1" >"$dir/cgroup.conf"
    export SLURM_CONF="$dir/slurm.conf"
    slurmctld >/dev/null 2>&1 && slurmd >/dev/null 2>&1 || { echo "SKIP: the Slurm daemons do not start"; exit 77; }
    for i in $(seq 100); do
        sinfo -h -o %T 2>/dev/null | grep -q idle && break
        sleep 0.1
    done
    sinfo -h -o %T 2>/dev/null | grep -q idle ||
        { echo "SKIP: the one-node Slurm did not come up: $(tail -2 "$dir/slurmd.log")"; exit 77; }
fi

# (asked only now: srun needs a configuration to answer)
srun --mpi=list 2>&1 | grep -q pmix || { echo "SKIP: this Slurm has no pmix plugin"; exit 77; }
before=$(ls /dev/shm | grep "^lmpi-slurm\.pmix\." || true)
[ -n "$before" ] || before="-"
failed=0
bad() { echo "FAIL [$name]: $*" >&2; failed=1; }
S="srun --mpi=pmix --overcommit"
for t in t_pt2pt t_coll t_comm t_rma t_datatype t_io; do
    name=$t
    timeout 120 $S -n 4 "$T/$t" >"$out" 2>&1 || bad "exit status $?: $(tail -5 "$out")"
done
# Slurm's pmi2 plugin also answers the PMI-1 wire protocol of our client
if srun --mpi=list 2>&1 | grep -q pmi2; then
    for t in t_pt2pt t_coll; do
        name="$t (pmi2)"
        timeout 120 srun --mpi=pmi2 --overcommit -n 4 "$T/$t" >"$out" 2>&1 || bad "exit status $?: $(tail -5 "$out")"
    done
    # (Slurm's name service is the job's own: MPI_Open_port opens no
    # network, which a shared one, Hydra's -nameserver, would)
    name="t_dpm connect (pmi2)"
    LMPI_MEMORY_REPORT=1 timeout 120 srun --mpi=pmi2 --overcommit -n 2 "$T/t_dpm" connect >"$out" 2>&1 ||
        bad "exit status $?: $(tail -5 "$out")"
    grep -q "transports: shm inside the node$" "$out" || bad "the network was opened: $(grep transports "$out")"
    # and the PMI-2 wire protocol itself (LMPI_PMI=2)
    for t in t_pt2pt t_coll t_comm; do
        name="$t (pmi2, LMPI_PMI=2)"
        LMPI_PMI=2 timeout 120 srun --mpi=pmi2 --overcommit -n 4 "$T/$t" >"$out" 2>&1 ||
            bad "exit status $?: $(tail -5 "$out")"
    done
    name="t_dpm connect (pmi2, LMPI_PMI=2)"
    LMPI_MEMORY_REPORT=1 LMPI_PMI=2 timeout 120 srun --mpi=pmi2 --overcommit -n 2 "$T/t_dpm" connect >"$out" 2>&1 ||
        bad "exit status $?: $(tail -5 "$out")"
    grep -q "transports: shm inside the node$" "$out" || bad "the network was opened: $(grep transports "$out")"
    name="abort (pmi2, LMPI_PMI=2)"
    LMPI_PMI=2 timeout 60 srun --mpi=pmi2 --overcommit -n 4 "$T/t_fail" abort >"$out" 2>&1
    st=$?
    case $st in 0 | 124) bad "exit status $st: $(tail -5 "$out")" ;; esac
fi
name=abort
timeout 60 $S -n 4 "$T/t_fail" abort >"$out" 2>&1
st=$?
[ "$st" = 3 ] || bad "exit status $st, expected 3 (MPI_Abort's code): $(tail -5 "$out")"
name=refused
timeout 60 $S -n 2 "$T/t_dpm" spawn >"$out" 2>&1
grep -q "MPI_ERR_SPAWN: spawn failed: the PMIx launcher could not start the processes" "$out" ||
    bad "spawn: $(tail -5 "$out")"
timeout 60 $S -n 2 "$T/t_dpm" connect >"$out" 2>&1
grep -q "MPI_ERR_SERVICE.*the PMIx server refused to publish" "$out" || bad "publish: $(tail -5 "$out")"
# nothing left in /dev/shm by the aborted and refused jobs (the inbox a
# port opened is unlinked when the job aborts: srun does not clean up)
name=leftovers
left=$(ls /dev/shm | grep "^lmpi-slurm\.pmix\." | grep -v -x -F "$before")
[ -z "$left" ] || bad "left in /dev/shm: $left"
[ "$failed" = 0 ] || exit 1
echo "slurm: passed"
