#!/bin/sh
# ulfm.sh MPIEXEC NRANKS PROGRAM CASE [EXPECT]: a program run in which one
# rank is killed under --with-ft ulfm (t_ulfm CASE, or examples/ulfm_solver).
# The survivors must finish (their output has EXPECT, by default "t_ulfm
# CASE: ok"), none may report a failed check, mpiexec must say the job went
# on and end with the killed rank's status (128 + SIGKILL).
mpiexec=$1 n=$2 prog=$3 case=$4 expect=${5:-"t_ulfm $4: ok"}
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
"$mpiexec" --timeout 60 --with-ft ulfm -n "$n" "$prog" "$case" >"$out" 2>"$err"
status=$?
sed 's/^/  stdout: /' "$out"
sed 's/^/  stderr: /' "$err"
fail=0
[ "$status" = 137 ] || { echo "FAIL: exit status $status, expected 137 (the killed rank's)"; fail=1; }
grep -q "$expect" "$out" || { echo "FAIL: no survivor finished (no \"$expect\")"; fail=1; }
! grep -q "failure(s)" "$err" || { echo "FAIL: a survivor's checks failed"; fail=1; }
grep -q "the job goes on without it" "$err" || { echo "FAIL: mpiexec did not report the failure"; fail=1; }
exit $fail
