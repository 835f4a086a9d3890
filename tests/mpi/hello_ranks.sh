#!/bin/sh
# hello_ranks.sh MPIEXEC HELLO N: every rank 0..N-1 reports exactly once.
mpiexec=$1 hello=$2 n=$3
shift 3
out=$("$mpiexec" --timeout 120 -n "$n" "$@" "$hello") || { echo "mpiexec failed: $?"; exit 1; }
lines=$(printf '%s\n' "$out" | grep -c "^hello from rank [0-9]* of $n on ")
distinct=$(printf '%s\n' "$out" | sed -n "s/^hello from rank \([0-9]*\) of $n on .*/\1/p" | sort -un | wc -l)
max=$(printf '%s\n' "$out" | sed -n "s/^hello from rank \([0-9]*\) of $n on .*/\1/p" | sort -n | tail -1)
echo "$lines lines, $distinct distinct ranks, highest $max"
[ "$lines" = "$n" ] && [ "$distinct" = "$n" ] && [ "$max" = "$((n - 1))" ]
