#!/bin/sh
# LeanMPI programs run under MPICH's Hydra: the PMI-1 wire protocol, and
# PMI-2 (LMPI_PMI=2); a failure survived with -disable-auto-cleanup (an
# exit, and a SIGKILL through leanmpi-ftwrap).
b=$1
found=0
for h in /usr/bin/mpiexec.hydra /opt/peers/mpich/bin/mpiexec.hydra; do
    [ -x "$h" ] || continue
    found=1
    echo "== $h"
    out=$(timeout 60 "$h" -n 4 "$b/examples/hello") || { echo "FAIL: hello under $h"; exit 1; }
    echo "$out"
    n=$(echo "$out" | sed -n 's/^hello from rank \([0-9]\) of 4 .*/\1/p' | sort -u | wc -l)
    [ "$n" = 4 ] || { echo "FAIL: expected 4 distinct ranks under $h"; exit 1; }
    timeout 60 "$h" -n 3 "$b/examples/ring" 1048576 2 || { echo "FAIL: ring under $h"; exit 1; }
    # dynamic processes: Hydra starts the spawned jobs and holds the names
    timeout 60 "$h" -n 2 "$b/tests/t_dpm" || { echo "FAIL: t_dpm (spawn, connect/accept, names) under $h"; exit 1; }
    # MPI-IO: the shared pointer's window and the node map under Hydra's PMI
    timeout 60 "$h" -n 3 "$b/tests/t_io" || { echo "FAIL: t_io under $h"; exit 1; }
    # the PMI-2 wire protocol on the same launcher (LMPI_PMI=2): its fence
    # is no barrier, and a get of a key no one put waits for every rank
    for t in t_pt2pt t_coll t_comm; do
        LMPI_PMI=2 timeout 60 "$h" -n 4 "$b/tests/$t" || { echo "FAIL: $t under $h with PMI-2"; exit 1; }
    done
    LMPI_PMI=2 timeout 100 "$h" -n 2 "$b/tests/t_dpm" || { echo "FAIL: t_dpm under $h with PMI-2"; exit 1; }
    # MPI_Abort: PMI-2's abort carries no exit code; the job stops, non-zero
    out=$(LMPI_PMI=2 timeout 60 "$h" -n 4 "$b/tests/t_fail" abort 2>&1)
    st=$?
    case $st in 0 | 124) echo "FAIL: MPI_Abort under $h with PMI-2: exit status $st"; exit 1 ;; esac
    # the rank's message gets out before the launcher stops the job (Hydra
    # 4.0 kills at once, not knowing PMI-2's abort)
    echo "$out" | grep -q "MPI_Abort(MPI_COMM_WORLD, 3) called by rank" ||
        { echo "FAIL: MPI_Abort under $h with PMI-2: the rank's message was lost"; echo "$out"; exit 1; }
    # User-Level Failure Mitigation through Hydra's notices (SIGUSR1 and
    # PMI_dead_processes): -disable-auto-cleanup, LMPI_FT=1; rank 2 exits
    # (Hydra kills everyone when a rank dies by a signal) while the others
    # wait on it, and the survivors recover and finish
    for pmi in 1 2; do
        out=$(LMPI_PMI=$pmi timeout 60 "$h" -disable-auto-cleanup -genv LMPI_FT 1 -genv T_ULFM_EXIT 1 -n 4 \
              "$b/tests/t_ulfm" kill 2>&1)
        st=$?
        echo "PMI-$pmi: $(echo "$out" | grep "^detected")"
        [ "$(echo "$out" | grep -c 't_ulfm kill: ok')" = 2 ] && ! echo "$out" | grep -q "failure(s)" ||
            { echo "FAIL: a rank's exit under $h -disable-auto-cleanup, PMI-$pmi (exit status $st)"; echo "$out"; exit 1; }
        # rank 2 killed by SIGKILL: survivable through leanmpi-ftwrap, which
        # the proxy sees exit with status 137 (without it the job ends)
        out=$(LMPI_PMI=$pmi timeout 60 "$h" -disable-auto-cleanup -genv LMPI_FT 1 -n 4 \
              "$b/bin/leanmpi-ftwrap" "$b/tests/t_ulfm" kill 2>&1)
        st=$?
        echo "PMI-$pmi, SIGKILL through leanmpi-ftwrap: $(echo "$out" | grep "^detected")"
        [ "$(echo "$out" | grep -c 't_ulfm kill: ok')" = 2 ] && ! echo "$out" | grep -q "failure(s)" ||
            { echo "FAIL: a rank's SIGKILL under $h -disable-auto-cleanup and leanmpi-ftwrap, PMI-$pmi (exit status $st)"; echo "$out"; exit 1; }
    done
    sleep 0.5
    # its own ranks (each says its pid): other tests may run t_fail meanwhile.
    # Hydra 4.0 does not know PMI-2's abort and exits at once: its ranks are
    # killed, and wait as zombies for init to reap them
    for pid in $(echo "$out" | sed -n 's/^rank [0-9]* pid \([0-9]*\) ready$/\1/p'); do
        state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$pid/status" 2>/dev/null)
        [ -z "$state" ] || [ "$state" = Z ] || { echo "FAIL: rank pid $pid left after MPI_Abort under $h with PMI-2"; exit 1; }
    done
done
if [ $found = 0 ]; then
    echo "SKIP: no mpiexec.hydra (apt-get install mpich, or pip install mpich==5.0.2)"
    exit 77
fi
echo "hydra: passed"
