#!/bin/sh
# leanmpi-ftwrap (tools/ftwrap): the program's exit status passes through, a
# death by signal S becomes an exit with 128 + S, the signals a launcher
# sends reach the program, the program dies with a killed wrapper, and a
# program that cannot be run gives 127 with a message.  No MPI runtime.
set -u
w="$1/bin/leanmpi-ftwrap"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$w" sh -c 'exit 3'
[ $? = 3 ] || fail "exit status 3 did not pass through"
"$w" sh -c 'kill -9 $$'
[ $? = 137 ] || fail "a SIGKILL did not become exit status 137"
"$w" sh -c 'kill -SEGV $$'
[ $? = 139 ] || fail "a SIGSEGV did not become exit status 139"
"$w" /nonexistent/program 2>"$tmp/err"
[ $? = 127 ] || fail "a program that cannot run did not give 127"
grep -q "cannot run /nonexistent/program" "$tmp/err" || fail "no message naming the program that cannot run"

# SIGUSR1 (Hydra's failure notice) reaches the program
"$w" sh -c 'trap "echo usr1 > '"$tmp"'/got; exit 5" USR1; echo $$ > '"$tmp"'/pid; while :; do sleep 0.05; done' &
wp=$!
for _ in $(seq 100); do [ -s "$tmp/pid" ] && break; sleep 0.02; done
kill -USR1 $wp
wait $wp
st=$?
[ $st = 5 ] && [ -f "$tmp/got" ] || fail "SIGUSR1 sent to the wrapper did not reach the program (status $st)"

# the program does not outlive a wrapper killed outright
rm -f "$tmp/pid"
"$w" sh -c 'echo $$ > '"$tmp"'/pid; exec sleep 30' &
wp=$!
for _ in $(seq 100); do [ -s "$tmp/pid" ] && break; sleep 0.02; done
child=$(cat "$tmp/pid")
kill -9 $wp
wait $wp 2>/dev/null
for _ in $(seq 100); do kill -0 "$child" 2>/dev/null || break; sleep 0.02; done
kill -0 "$child" 2>/dev/null && { kill -9 "$child"; fail "the program outlived its killed wrapper"; }
echo "ftwrap: passed"
