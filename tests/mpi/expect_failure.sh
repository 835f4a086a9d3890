#!/bin/sh
# expect_failure.sh MPIEXEC NRANKS EXPECTED_STATUS REGEX PROGRAM ARGS...
# Runs a job that must fail and checks what the launcher promises: the exit
# status, a message on stderr matching REGEX (naming the rank and the cause),
# the job ending within 5 s of the failure, no rank process left behind and no
# LeanMPI file left in /dev/shm.
# With KILL_RANK=k in the environment the test itself kills rank k with
# SIGKILL from outside once every rank is ready (kill -9 of one rank).
mpiexec=$1 n=$2 expected=$3 regex=$4
shift 4
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
start=$(date +%s.%N)
"$mpiexec" -n "$n" "$@" >"$out" 2>"$err" &
job=$!
if [ -n "${KILL_RANK:-}" ]; then
    for i in $(seq 100); do
        [ "$(grep -c ' ready$' "$out")" -ge "$n" ] && break
        sleep 0.1
    done
    victim=$(sed -n "s/^rank $KILL_RANK pid \([0-9]*\) ready$/\1/p" "$out")
    [ -n "$victim" ] || { echo "FAIL: rank $KILL_RANK never became ready"; kill -9 $job; exit 1; }
    start=$(date +%s.%N)
    kill -9 "$victim"
fi
wait $job
status=$?
elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
fail=0
echo "exit status $status after ${elapsed}s"
sed 's/^/  stderr: /' "$err"
if [ "$status" != "$expected" ]; then
    echo "FAIL: exit status $status, expected $expected"; fail=1
fi
if ! grep -Eq "$regex" "$err"; then
    echo "FAIL: stderr does not match /$regex/"; fail=1
fi
# 0.2 s of the victim's own delay plus launch; the promise is 5 s after the failure
if awk -v e="$elapsed" 'BEGIN { exit !(e > 6) }'; then
    echo "FAIL: the job took ${elapsed}s to end"; fail=1
fi
for pid in $(sed -n 's/^rank [0-9]* pid \([0-9]*\) ready$/\1/p' "$out"); do
    if kill -0 "$pid" 2>/dev/null; then
        echo "FAIL: rank process $pid still running"; fail=1
        kill -9 "$pid" 2>/dev/null
    fi
done
if ls /dev/shm/lmpi-kvs_${job}_* >/dev/null 2>&1; then
    echo "FAIL: shared-memory file left behind:"; ls -l /dev/shm/lmpi-kvs_${job}_*; fail=1
fi
exit $fail
