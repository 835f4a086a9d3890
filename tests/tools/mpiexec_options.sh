#!/bin/sh
# mpiexec's options, checked with plain programs as ranks: -genv/-env/-x reach
# every rank, --tag-output prefixes lines, PMI variables are set, the exit
# status of a rank comes back, SIGTERM to mpiexec stops the whole job.
b=$1
m="$b/bin/mpiexec"
fail=0
check() { if [ "$1" != "$2" ]; then echo "FAIL: $3: got [$1] expected [$2]"; fail=1; else echo "ok: $3"; fi; }

out=$(FROM_ENV=outer "$m" -n 2 -genv A 1 -env B 2 -x C=3 -x FROM_ENV sh -c 'echo "$A$B$C$FROM_ENV"' | sort -u)
check "$out" "123outer" "-genv, -env, -x NAME=VALUE and -x NAME"
out=$("$m" -n 3 --tag-output sh -c 'echo "line $PMI_RANK of $PMI_SIZE"' | sort)
check "$out" "$(printf '[0] line 0 of 3\n[1] line 1 of 3\n[2] line 2 of 3')" "--tag-output and PMI_RANK/PMI_SIZE"
out=$("$m" -n 2 -l sh -c 'printf "no newline"' | sort)
check "$out" "$(printf '[0] no newline\n[1] no newline')" "-l flushes a last partial line"
"$m" -n 2 sh -c 'exit 0'
check "$?" "0" "all ranks exit 0 -> status 0"
"$m" -n 2 sh -c '[ "$PMI_RANK" = 1 ] && exit 5; sleep 30' 2>/dev/null
check "$?" "5" "a rank's exit status comes back"
"$m" -n 1 /nonexistent/program 2>/dev/null
check "$?" "127" "a program that cannot start"
"$m" -n 2 --bogus-option true 2>/dev/null
check "$?" "1" "unknown options are rejected"
# help on stdout with status 0, as Hydra and Open MPI (mpiexec --help | less)
out=$("$m" --help 2>/dev/null | head -1)
check "$out" "usage: mpiexec [options] program [args...] [: [-n N] [-wdir DIR] [-env NAME VALUE] program2 [args...] ...]" "--help on stdout"
"$m" --help >/dev/null 2>&1
check "$?" "0" "--help exits 0"
out=$("$m" --version 2>/dev/null | head -1)
check "$out" "mpiexec (LeanMPI) $(sed -n 's/^project(LeanMPI VERSION \([0-9.]*\).*/\1/p' "$(dirname "$0")/../../CMakeLists.txt")" "--version"
# the cause of a failed start comes before the exit status
out=$("$m" -n 2 ./does-not-exist 2>&1 | head -1)
check "$out" "mpiexec: cannot execute './does-not-exist': No such file or directory" "exec failure: the cause first"
MPIEXEC_TIMEOUT=1 "$m" -n 2 sleep 20 2>/dev/null
check "$?" "124" "MPIEXEC_TIMEOUT stops the job as --timeout does"
MPIEXEC_TIMEOUT=30 "$m" --timeout 1 -n 2 sleep 20 2>/dev/null
check "$?" "124" "--timeout wins over MPIEXEC_TIMEOUT"
MPIEXEC_TIMEOUT=soon "$m" -n 1 true 2>/dev/null
check "$?" "1" "an invalid MPIEXEC_TIMEOUT is rejected"
# MPMD (':'): one job, the applications' ranks in turn (tests/mpi/t_mpmd.c
# checks MPI_APPNUM), each application's -n, -wdir and -env its own
out=$("$m" -n 2 sh -c 'echo "$PMI_RANK/$PMI_SIZE a ${C:-none} $(pwd)"' : -n 2 -wdir / -env C blue sh -c 'echo "$PMI_RANK/$PMI_SIZE b $C $(pwd)"' : sh -c 'echo "$PMI_RANK/$PMI_SIZE c ${C:-none}"' | sort)
check "$out" "$(printf '0/5 a none %s\n1/5 a none %s\n2/5 b blue /\n3/5 b blue /\n4/5 c none' "$(pwd)" "$(pwd)")" "MPMD: ranks, -n, -wdir and -env per application"
# the same line across two hosts (their proxies started here: --launcher
# fork), each host running ranks of two applications
out=$("$m" --launcher fork --iface lo --host h0:3,h1:2 -n 2 sh -c 'echo "$PMI_RANK/$PMI_SIZE a ${C:-none} $(pwd)"' : -n 2 -wdir / -env C blue sh -c 'echo "$PMI_RANK/$PMI_SIZE b $C $(pwd)"' : sh -c 'echo "$PMI_RANK/$PMI_SIZE c ${C:-none}"' | sort)
check "$out" "$(printf '0/5 a none %s\n1/5 a none %s\n2/5 b blue /\n3/5 b blue /\n4/5 c none' "$(pwd)" "$(pwd)")" "MPMD across hosts: ranks, -n, -wdir and -env per application"
"$m" -n 2 true : 2>/dev/null
check "$?" "1" "MPMD: a ':' with no program after it is rejected"
"$m" -n 2 true : --tag-output true 2>/dev/null
check "$?" "1" "MPMD: a job option after ':' is rejected"
"$m" -n 2 --host far-away-host true 2>/dev/null
check "$?" "1" "--host other than this machine is rejected"

# Sessions (tools/mpiexec/README.md): where the node has a processor for
# each rank, every rank leads a session of its own; a job with more ranks
# than processors is one session of its own, led by mpiexec's child, not
# the launcher's (the scheduler's autogroups)
np=$(getconf _NPROCESSORS_ONLN)
n=$((np + 1))
out=$("$m" -n "$np" sh -c 'set -- $(cat /proc/$$/stat); [ "$6" = $$ ] && echo own || echo "session $6, pid $$"' | sort -u)
check "$out" "own" "$np ranks on $np processors: each leads a session"
set -- $(cat /proc/$$/stat)
here=$6
out=$("$m" -n "$n" sh -c 'set -- $(cat /proc/$$/stat); echo "$6 $(cat /proc/$6/comm)"' | sort -u)
check "$(echo "$out" | wc -l) ${out#* }" "1 mpiexec" "$n ranks on $np processors: one session, led by mpiexec"
check "$([ "${out%% *}" != "$here" ] && echo other)" "other" "$n ranks on $np processors: not the launcher's session"
"$m" -n "$n" sh -c 'exit 7' 2>/dev/null
check "$?" "7" "a job in a session of its own: the exit status comes back"

# Binding: a job with a rank per processor pins each rank to a processor
# of its own, as Open MPI does; --bind-to none and larger jobs are not pinned
mine=$(sed -n 's/^Cpus_allowed_list:\s*//p' /proc/$$/status)
ncpu=$(nproc)  # (the processors this shell may use)
out=$("$m" -n "$ncpu" sh -c 'sed -n "s/^Cpus_allowed_list:\s*//p" /proc/$$/status' | sort -n | uniq | grep -c '^[0-9][0-9]*$')
check "$out" "$ncpu" "$ncpu ranks on $ncpu processors: one processor each"
out=$("$m" -n "$ncpu" --bind-to none sh -c 'sed -n "s/^Cpus_allowed_list:\s*//p" /proc/$$/status' | sort -u)
check "$out" "$mine" "--bind-to none: not pinned"
out=$("$m" -n "$((ncpu + 1))" sh -c 'sed -n "s/^Cpus_allowed_list:\s*//p" /proc/$$/status' | sort -u)
check "$out" "$mine" "$((ncpu + 1)) ranks on $ncpu processors: not pinned"

# SIGTERM to mpiexec stops every rank (both ways of starting them);
# SIGKILL too, through the ranks' parent-death signal
for sig in TERM:$np TERM:$n KILL:$n; do
    tmp=$(mktemp -d)
    ranks=${sig#*:}
    "$m" -n "$ranks" sh -c 'echo $$ > '"$tmp"'/pid.$PMI_RANK; exec sleep 60' 2>/dev/null &
    job=$!
    for i in $(seq 50); do [ "$(ls "$tmp" | wc -l)" = "$ranks" ] && break; sleep 0.2; done
    sleep 0.2
    kill -"${sig%:*}" $job
    wait $job
    check "$?" "$([ "${sig%:*}" = TERM ] && echo 143 || echo 137)" "SIG${sig%:*} to mpiexec of $ranks ranks: its status"
    sleep 0.3
    for f in "$tmp"/pid.*; do
        p=$(cat "$f")
        # (a rank whose parent was killed may wait as a zombie for init)
        state=$(cut -d' ' -f3 /proc/"$p"/stat 2>/dev/null)
        if [ -n "$state" ] && [ "$state" != Z ]; then echo "FAIL: SIG${sig%:*}: rank process $p survived"; fail=1; kill -9 "$p"; fi
    done
    rm -rf "$tmp"
done
exit $fail
