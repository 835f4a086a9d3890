#!/bin/sh
# faults.sh MPIEXEC T_FAULTS CASE...   (CASE: all, or one or more of those below)
# Faults a job on a busy or shared machine meets; each case checks what the
# user sees (exit status, a message naming the rank and the cause) and
# reports the time until every process of the job was gone and what was
# left behind (processes, /dev/shm names): it must be nothing.
#   exit0           a rank exits with status 0 without MPI_Finalize
#   kill_wrapped    SIGKILL of mpiexec whose ranks run under `sh -c` wrappers
#   sibling_wrapped one rank (under a wrapper) dies: the other wrapped ranks go
#   flood           a rank sends PMI commands without reading the replies
#   fuzz            hostile PMI lines from one rank; the job still succeeds
#   cloexec         PMI_FD is close-on-exec and gone from the environment
#   kill_init       SIGKILL of mpiexec during MPI_Init of 64 ranks, 10 times
#   bad_env         PMI_RANK out of range, LMPI_VNODE_MAP overflow, -genv PMI_*,
#                   a negative LMPI_SLEEP_AFTER
set -u
MPIEXEC=$1 PROG=$2
shift 2
[ "${1:-all}" = all ] && set -- exit0 kill_wrapped sibling_wrapped flood fuzz cloexec kill_init bad_env
out=$(mktemp) err=$(mktemp) failed=$(mktemp -u) expired=$(mktemp -u) pids=$(mktemp)
trap 'rm -f "$out" "$err" "$failed" "$expired" "$pids"' EXIT

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
shm_names() { ls /dev/shm 2>/dev/null | grep '^lmpi-' | sort; }
# (a marker file: checks run inside $(...) subshells too)
bad() { echo "FAIL [$case]: $*" >&2; : >"$failed"; }

# Wait (up to 10 s) until no process carries TOKEN; print the seconds it took
# from START; kill and report whatever is still there.
gone() {
    token=$1 start=$2
    for i in $(seq 200); do
        pgrep -f -- "$token" >/dev/null 2>&1 || break
        sleep 0.05
    done
    t=$(since "$start")
    if pgrep -f -- "$token" >/dev/null 2>&1; then
        bad "processes left after ${t}s: $(pgrep -f -- "$token" | tr '\n' ' ')"
        pkill -9 -f -- "$token"
    fi
    echo "$t"
}

wait_ready() {
    n=$1
    for i in $(seq 200); do
        [ "$(grep -c ' ready$' "$out" 2>/dev/null)" -ge "$n" ] && return 0
        sleep 0.05
    done
    bad "only $(grep -c ' ready$' "$out") of $n ranks became ready"
    return 1
}

# Names this case's jobs left: /dev/shm names are lmpi-kvs_<mpiexec pid>_...
# (other tests running beside us make names of their own meanwhile).
left_names() {
    now_names=$(shm_names)
    mine="^lmpi-kvs_($(paste -sd'|' "$pids"))_"
    new=$(echo "$now_names" | comm -13 "$before" - | grep -E "$mine" || true)
    [ -z "$new" ] || bad "left in /dev/shm: $new"
    [ -z "$new" ] && echo "none" || echo "$new"
}

report() { echo "case $case: $*"; }

# run_job LIMIT MPIEXEC-ARGS...: mpiexec with a time limit, its pid recorded
# in $pids; $st is its exit status, 124 when the limit stopped it.
run_job() {
    limit=$1
    shift
    rm -f "$expired"
    "$MPIEXEC" "$@" >"$out" 2>"$err" &
    pid=$!
    echo $pid >>"$pids"
    # the watchdog's sleep must not outlive it (it would hold CTest's pipe)
    (trap 'kill $s 2>/dev/null; exit 0' TERM; sleep "$limit" & s=$!; wait $s; : >"$expired"
     kill -TERM $pid 2>/dev/null) >/dev/null 2>&1 &
    dog=$!
    wait $pid
    st=$?
    kill $dog 2>/dev/null
    wait $dog 2>/dev/null
    [ -e "$expired" ] && st=124
}

# stopped REGEX NOTE MPIEXEC-ARGS...: a job that must be stopped (non-zero,
# not by the 30 s limit) with a message matching REGEX; reports the time
# until every process of it was gone.
stopped() {
    regex=$1 note=$2
    shift 2
    start=$(now)
    run_job 30 "$@"
    t=$(gone "$token" "$start")
    [ $st -ne 0 ] && [ $st -ne 124 ] || bad "exit status $st (124: the job hung)"
    grep -q "$regex" "$err" || bad "no message matching /$regex/: $(cat "$err")"
    report "exit status $st, every process gone ${t}s after start$note, left: $(left_names)"
}

# finished MPIEXEC-ARGS...: a job that must succeed despite what it does.
finished() {
    start=$(now)
    run_job 60 "$@"
    t=$(gone "$token" "$start")
    [ $st -eq 0 ] || bad "exit status $st: $(grep -v ready "$out") $(tail -5 "$err")"
    grep -q "^OK" "$out" || bad "the job did not finish"
    report "exit status $st after ${t}s ($(grep -c . "$err") launcher warnings), left: $(left_names)"
}


for case in "$@"; do
    token="lmpi-fault-$case-$$"
    before=$(mktemp)
    shm_names >"$before"
    : >"$out"
    : >"$err"
    case $case in
    exit0)
        stopped "rank 1 .*without calling MPI_Finalize" " (rank 1 exits at ~0.2 s)" -n 4 "$PROG" exit0 "$token"
        ;;
    kill_wrapped)
        # `; true` keeps sh from exec'ing the program: a real wrapper
        "$MPIEXEC" -n 4 sh -c "$PROG sleep $token; true" >"$out" 2>"$err" &
        job=$!
        echo $job >>"$pids"
        wait_ready 4
        start=$(now)
        kill -9 $job
        wait $job 2>/dev/null
        t=$(gone "$token" "$start")
        report "mpiexec killed; every wrapped rank gone after ${t}s, left: $(left_names)"
        ;;
    sibling_wrapped)
        # `; true` keeps sh from exec'ing the program: a real wrapper
        stopped "rank 1 " " (rank 1 dies at ~0.2 s)" -n 4 sh -c "$PROG die $token; true"
        ;;
    flood)
        stopped "rank 1 .*does not read its PMI replies" "" -n 2 "$PROG" flood "$token"
        ;;
    fuzz)
        finished -n 2 "$PROG" fuzz "$token"
        # a hostile rank cannot flood the job's stderr either
        [ "$(grep -c 'mpiexec: ' "$err")" -le 10 ] || bad "$(grep -c 'mpiexec: ' "$err") launcher warnings"
        ;;
    cloexec)
        finished -n 2 "$PROG" cloexec "$token"
        ;;
    kill_init)
        worst=0 leaks=0
        for try in 1 2 3 4 5 6 7 8 9 10; do
            "$MPIEXEC" -n 64 --oversubscribe "$PROG" init "$token" >/dev/null 2>&1 &
            job=$!
            echo $job >>"$pids"
            sleep "0.0$(( (try - 1) / 2 ))$(( (try - 1) % 2 * 5 ))" # 0-45 ms: inside the start of 64 ranks
            start=$(now)
            kill -9 $job 2>/dev/null
            wait $job 2>/dev/null
            t=$(gone "$token" "$start")
            worst=$(awk -v a="$worst" -v b="$t" 'BEGIN { print (b > a) ? b : a }')
        done
        report "10 kills at 0-45 ms into a 64-rank start; every process gone within ${worst}s each time, left: $(left_names)"
        ;;
    bad_env)
        start=$(now)
        run_job 30 -n 2 sh -c "PMI_RANK=1000000 exec $PROG init $token"
        st1=$st
        [ $st1 -ne 0 ] && [ $st1 -lt 124 ] || bad "PMI_RANK=1000000: exit status $st1 (a crash is 139)"
        grep -q "PMI_RANK=1000000 is not a rank" "$err" || bad "PMI_RANK=1000000: no clear message: $(cat "$err")"
        run_job 30 -n 2 -genv LMPI_VNODE_MAP 4611686018427387904,100000000 "$PROG" init "$token"
        st2=$st
        [ $st2 -ne 0 ] && [ $st2 -lt 124 ] || bad "LMPI_VNODE_MAP: exit status $st2"
        grep -q "LMPI_VNODE_MAP: node id .* out of range" "$err" || bad "LMPI_VNODE_MAP: no clear message: $(cat "$err")"
        run_job 30 -n 2 -genv PMI_RANK 1 "$PROG" init "$token"
        st3=$st
        [ $st3 -ne 0 ] || bad "-genv PMI_RANK was accepted"
        grep -q "sets PMI_RANK itself" "$err" || bad "-genv PMI_RANK: no clear message: $(cat "$err")"
        # a negative wait before sleeping (it would mean never sleeping): said, and the default used
        run_job 30 -n 2 -genv LMPI_SLEEP_AFTER -5 "$PROG" init "$token"
        st4=$st
        [ $st4 -eq 0 ] || bad "LMPI_SLEEP_AFTER=-5: exit status $st4, expected 0 (the default is used)"
        grep -q "ignoring LMPI_SLEEP_AFTER=-5 (negative)" "$err" || bad "LMPI_SLEEP_AFTER=-5: no clear message: $(cat "$err")"
        t=$(gone "$token" "$start")
        report "exit statuses $st1 / $st2 / $st3 / $st4, every process gone ${t}s after start, left: $(left_names)"
        ;;
    *)
        bad "unknown case"
        ;;
    esac
    rm -f "$before"
done
[ ! -e "$failed" ]
