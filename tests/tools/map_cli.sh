#!/bin/sh
# leanmpi-map and mpiexec's placement options on bad input: a clear message
# naming the problem (and the line of a file), a non-zero status, nothing
# launched; and the paper's example through the command, table and JSON.
b=$1
map="$b/bin/leanmpi-map" m="$b/bin/mpiexec"
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# expect STATUS REGEX command...: the status and a message matching REGEX
expect() {
    want=$1 regex=$2
    shift 2
    out=$("$@" 2>&1)
    st=$?
    if [ "$st" != "$want" ] || ! printf '%s' "$out" | grep -Eq -e "$regex"; then
        echo "FAIL: $*: status $st (expected $want), output: $out"
        fail=1
    else
        echo "ok: $* -> $st: $(printf '%s' "$out" | grep -E -e "$regex" | head -1)"
    fi
}

expect 0 "TZXY +6 +14.65 +24 +1.083e\+09 +3" "$map" --network torus:8x16x32 --cores 4 --pattern 2d-nn:128x128:star
json=$("$map" --network torus:8x16x32 --cores 4 --pattern 2d-nn:128x128:star --json)
echo "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
o = {e["order"]: e for e in d["orders"]}
import itertools
perms = {"".join(q) for q in itertools.permutations("TXYZ")}
assert d["pick"] in o and perms <= set(o), d["pick"]
assert o[d["pick"]]["max_contention"] <= o["TZXY"]["max_contention"]
assert (o["TXYZ"]["paper_contention"], o["TZXY"]["paper_contention"], o["XYZT"]["paper_contention"]) == (24, 6, 10)
for e in d["orders"]:
    assert set(e) >= {"order", "paper_contention", "avg_contention", "max_contention", "hop_bytes", "max_dilation"}
print("ok: --json has pick and all 24 orders (and %d tiled) with the paper counts 24/6/10" % (len(o) - 24))
' || fail=1
expect 0 "block .*<- pick" "$map" --network flat:4 --cores 4 --pattern 1d-nn:16 --size large

printf 'torus 4x4\ncores 2\nbogus line\n' > "$tmp/bad.conf"
expect 1 "bad.conf:3: unknown line 'bogus'" "$map" --network "$tmp/bad.conf" --pattern 2d-nn:4x8
printf 'nodes 12\ntorus 4x4\ncores 2\n' > "$tmp/nodes.conf"
expect 1 "nodes.conf:1: nodes 12 does not match the network \(16 nodes" "$map" --network "$tmp/nodes.conf" --pattern 2d-nn:4x8
printf 'cores 2\nSwitchName=s0 Nodes=n[0-3]\nSwitchName=top Switches=s0,s7\n' > "$tmp/tree.conf"
expect 1 "tree.conf:3: switch s7 is not declared" "$map" --network "$tmp/tree.conf" --pattern 1d-nn:8
expect 1 "2d-nn:64x64 has 4096 ranks; the network has 16 nodes x 2 cores" "$map" --network torus:4x4 --cores 2 --pattern 2d-nn:64x64
expect 1 "describes 32 ranks, not the 30 of -n" "$map" --network torus:4x4 --cores 2 --pattern 2d-nn:4x8 -n 30
expect 1 "expected 2 grid sizes" "$map" --network torus:4x4 --cores 2 --pattern 2d-nn:32

# mpiexec: the same checks before anything starts (the program would create this file)
marker="$tmp/launched"
expect 1 "describes 32 ranks, not the 8 of -n" "$m" -n 8 --network torus:4x4 --cores 2 --pattern 2d-nn:4x8 touch "$marker"
expect 1 "bad.conf:3: unknown line 'bogus'" "$m" -n 8 --network "$tmp/bad.conf" touch "$marker"
expect 1 "nodes.conf:1: nodes 12 does not match" "$m" -n 8 --network "$tmp/nodes.conf" touch "$marker"
expect 1 "not an order of this network" "$m" -n 8 --network torus:4x4 --cores 2 --map-by TXYZ touch "$marker"
expect 1 "--map-by auto needs --pattern" "$m" -n 8 --network torus:4x4 --cores 2 --map-by auto touch "$marker"
expect 1 "need --network" "$m" -n 8 --pattern 2d-nn:2x4 touch "$marker"
expect 1 "40 ranks do not fit on 16 nodes x 2 cores" "$m" -n 40 --network torus:4x4 --cores 2 touch "$marker"
expect 1 "ppr:2:node places 2 ranks per node and only this node is known" "$m" -n 4 --map-by ppr:2:node touch "$marker"
expect 1 "--bind-to board: expected none, core or package" "$m" -n 2 --bind-to board touch "$marker"
if [ -e "$marker" ]; then echo "FAIL: a job with bad placement input was launched"; fail=1; fi
# ppr places N per node in node order
out=$("$m" -n 6 --network flat:4 --cores 4 --map-by ppr:2:node sh -c 'echo "$PMI_RANK $LMPI_VNODE_NAME"' | sort -n | tr '\n' ' ')
[ "$out" = "0 node0 1 node0 2 node1 3 node1 4 node2 5 node2 " ] && echo "ok: ppr:2:node" || { echo "FAIL: ppr:2:node gave $out"; fail=1; }
exit $fail
