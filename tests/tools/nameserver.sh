#!/bin/sh
# Jobs started independently meet through a shared hydra_nameserver
# (mpiexec -nameserver HOST[:PORT], Hydra's -nameserver): ours with ours,
# Hydra's with ours both ways, on this host; and bad -nameserver input.
# Across hosts: multihost.sh jobs2.
b=$1
T="$b/tests"
M="$b/bin/mpiexec --timeout 60"
NS=
for n in /usr/bin/hydra_nameserver /opt/peers/mpich/bin/hydra_nameserver; do
    [ -x "$n" ] && NS=$n && break
done
[ -n "$NS" ] || { echo "SKIP: no hydra_nameserver (apt-get install mpich, or pip install mpich==5.0.2)"; exit 77; }
out=$(mktemp) out2=$(mktemp)
port=$((20000 + $$ % 20000))
"$NS" -port $port >/dev/null 2>&1 &
ns=$!
s=
trap 'kill $ns $s 2>/dev/null; rm -f "$out" "$out2"' EXIT
fail() { echo "FAIL: $*"; cat "$out" "$out2"; exit 1; }

# the server listens once its probe answers
for i in $(seq 50); do
    $M -nameserver localhost:$port -n 1 true 2>/dev/null && break
    sleep 0.1
done

pair() { # pair NAME SERVE-LAUNCH VISIT-LAUNCH: t_dpm serve and visit, independently started
    name=$1
    env T_DPM_SERVICE="t_dpm-$name" $2 "$T/t_dpm" serve >"$out" 2>&1 &
    s=$!
    env T_DPM_SERVICE="t_dpm-$name" $3 "$T/t_dpm" visit >"$out2" 2>&1 || fail "$name: the visiting job failed"
    wait $s || fail "$name: the serving job failed"
    grep -q "visit: rank 0 of .* met " "$out2" || fail "$name: no meeting reported"
    echo "$name: passed"
}
pair ours "$M -nameserver localhost:$port -n 2" "$M -nameserver localhost:$port -n 3"
for h in /usr/bin/mpiexec.hydra /opt/peers/mpich/bin/mpiexec.hydra; do
    [ -x "$h" ] || continue
    pair "hydra-ours" "timeout 60 $h -nameserver localhost:$port -n 2" "$M -nameserver localhost:$port -n 2"
    pair "ours-hydra" "$M -nameserver localhost:$port -n 1" "timeout 60 $h -nameserver localhost:$port -n 2"
    # Hydra's -nameserver is told by a lookup's answer under PMI-2 too
    pair "hydra-pmi2-ours" "env LMPI_PMI=2 timeout 60 $h -nameserver localhost:$port -n 2" \
        "$M -nameserver localhost:$port -n 2"
done

# Hydra does not say it has a name server, a lookup's answer does: a port
# opened under -nameserver opens the network (jobs on other hosts may come;
# multihost.sh jobs2 meets them), one without it does not
if grep -q "^LIBFABRIC_FOUND:INTERNAL=1" "$b/CMakeCache.txt" 2>/dev/null; then
    for h in /usr/bin/mpiexec.hydra /opt/peers/mpich/bin/mpiexec.hydra; do
        [ -x "$h" ] || continue
        for pmi in 1 2; do
            LMPI_PMI=$pmi LMPI_MEMORY_REPORT=1 timeout 60 $h -nameserver localhost:$port -n 2 "$T/t_dpm" connect \
                >"$out" 2>&1 || fail "t_dpm connect under $h -nameserver (PMI-$pmi)"
            grep -q "transports: shm inside the node, between nodes ofi" "$out" ||
                fail "a port under $h -nameserver (PMI-$pmi) opened no network: $(grep transports "$out")"
            LMPI_PMI=$pmi LMPI_MEMORY_REPORT=1 timeout 60 $h -n 2 "$T/t_dpm" connect >"$out" 2>&1 ||
                fail "t_dpm connect under $h (PMI-$pmi)"
            grep -q "transports: shm inside the node$" "$out" ||
                fail "a port under $h without -nameserver (PMI-$pmi) opened the network: $(grep transports "$out")"
        done
    done
    echo "ports under Hydra's -nameserver open the network, and only there: passed"
fi

# a name already taken at the server: MPI_ERR_SERVICE naming it
$M -nameserver localhost:$port -n 2 "$T/t_dpm" serve >"$out" 2>&1 &
s=$!
sleep 1
T_DPM_SERVICE=t_dpm-jobs $M -nameserver localhost:$port -n 1 "$T/t_dpm" serve >"$out2" 2>&1 && fail "a second publish of one name succeeded"
grep -q "MPI_ERR_SERVICE.*t_dpm-jobs.*already published at the name server" "$out2" || fail "the second publish's message"
$M -nameserver localhost:$port -n 1 "$T/t_dpm" visit >"$out2" 2>&1 || fail "the visit after a refused publish"
wait $s || fail "the first serving job"
# the refused port was never left at the server (hydra_nameserver keeps a
# second publish it refuses, and hands it out after the first is unpublished)
if command -v python3 >/dev/null; then
    left=$(python3 -c "
import socket, struct
c = socket.create_connection(('127.0.0.1', $port))
req = [b'LOOKUP\0', b't_dpm-jobs\0']
c.sendall(struct.pack('=i', len(req)) + b''.join(struct.pack('=i', len(w)) + w for w in req))
d = b''
while len(d) < 4 or len(d) < 4 + struct.unpack('=i', d[:4])[0]:
    r = c.recv(4096)
    if not r:
        break
    d += r
print(d[4:].rstrip(b'\0').decode() or '-')") || fail "cannot ask the name server"
    [ "$left" = "-" ] || fail "a port is still published under t_dpm-jobs: $left"
fi

# bad input: nothing to reach, no such host, not HOST[:PORT]
for spec in "localhost:1" "lmpi-no-such-host.invalid" "localhost:x" ":5"; do
    $M -nameserver "$spec" -n 1 true >"$out" 2>&1 && fail "-nameserver $spec was accepted"
    grep -q "mpiexec: -nameserver" "$out" || fail "-nameserver $spec: no message"
    echo "-nameserver $spec: $(cat "$out")"
done
echo "nameserver: passed"
