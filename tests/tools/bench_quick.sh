#!/bin/sh
# A benchmark's quick form runs on LeanMPI alone and ends with one valid JSON
# line in the shape of ../shared/BENCHMARKS.md (keeps bench/ from rotting).
src=$1 name=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$src/bench/run" "$name" --quick --no-peers > "$out"
rc=$?
[ $rc = 77 ] && exit 77 # skipped, saying why (bench fortran without a Fortran compiler)
[ $rc = 0 ] || { cat "$out"; exit 1; }
tail -n 25 "$out" | cut -c1-200
tail -n 1 "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["bench"] == sys.argv[1], d["bench"]
assert d["results"], "no results"
for r in d["results"]:
    for k in ("impl", "metric", "value", "min", "max", "unit"):
        assert k in r, (k, r)
print("%d results, JSON shape ok" % len(d["results"]))
' "$name"
