#!/bin/sh
# A program compiled against MPICH 5.0.2's standard ABI (mpicc_abi) runs with
# LeanMPI's libmpi_abi.so.1 by library swap, under LeanMPI's mpiexec.
b=$1 src=$2
cc_abi=/opt/peers/mpich/bin/mpicc_abi
if [ ! -x $cc_abi ]; then
    echo "SKIP: $cc_abi missing (python3 -m venv /opt/peers/mpich && /opt/peers/mpich/bin/pip install mpich==5.0.2)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$cc_abi -o "$tmp/hello_abi" "$src" || exit 1
readelf -d "$tmp/hello_abi" | grep -q 'NEEDED.*libmpi_abi.so.1' || { echo "FAIL: not linked against libmpi_abi.so.1"; exit 1; }
lib=$(LD_LIBRARY_PATH="$b/lib" ldd "$tmp/hello_abi" | sed -n 's/.*libmpi_abi.so.1 => \([^ ]*\).*/\1/p')
echo "libmpi_abi.so.1 resolves to $lib"
[ "$(readlink -f "$lib")" = "$(readlink -f "$b/lib/libmpi_abi.so.1")" ] || { echo "FAIL: swap did not pick LeanMPI"; exit 1; }
out=$(LD_LIBRARY_PATH="$b/lib" "$b/bin/mpiexec" --timeout 60 -n 4 "$tmp/hello_abi") || { echo "FAIL: run"; exit 1; }
echo "$out"
n=$(echo "$out" | sed -n 's/^hello from rank \([0-9]\) of 4 .*/\1/p' | sort -u | wc -l)
[ "$n" = 4 ] || { echo "FAIL: expected 4 distinct ranks"; exit 1; }
echo "abi_swap: passed"
