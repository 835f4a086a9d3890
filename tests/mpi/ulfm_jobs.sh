#!/bin/sh
# ulfm_jobs.sh MPIEXEC PROGRAM: two jobs of two mpiexecs under --with-ft ulfm
# meet through a port (t_ulfm jobs_serve / jobs_visit); the visitor's rank 1
# is killed.  The serving job hears of it from no launcher, yet its ranks'
# calls must end with the failure and the job must finish cleanly; the
# visiting job ends with the killed rank's status (128 + SIGKILL).
mpiexec=$1 prog=$2
dir=$(mktemp -d)
trap 'kill $s 2>/dev/null; rm -rf "$dir"' EXIT
"$mpiexec" --timeout 60 --with-ft ulfm -n 2 "$prog" jobs_serve "$dir/port" >"$dir/serve.out" 2>"$dir/serve.err" &
s=$!
"$mpiexec" --timeout 60 --with-ft ulfm -n 2 "$prog" jobs_visit "$dir/port" >"$dir/visit.out" 2>"$dir/visit.err"
vstatus=$?
wait $s
sstatus=$?
for f in serve.out serve.err visit.out visit.err; do sed "s/^/  $f: /" "$dir/$f"; done
fail=0
[ "$sstatus" = 0 ] || { echo "FAIL: the serving job's exit status $sstatus, expected 0"; fail=1; }
[ "$vstatus" = 137 ] || { echo "FAIL: the visiting job's exit status $vstatus, expected 137"; fail=1; }
grep -q "t_ulfm jobs_serve: ok" "$dir/serve.out" || { echo "FAIL: the serving job did not finish"; fail=1; }
grep -q "t_ulfm jobs_visit: ok" "$dir/visit.out" || { echo "FAIL: the visitor's survivor did not finish"; fail=1; }
! grep -q "failure(s)" "$dir/serve.err" "$dir/visit.err" || { echo "FAIL: a survivor's checks failed"; fail=1; }
exit $fail
