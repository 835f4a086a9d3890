#!/bin/sh
# Our mpi.h against MPICH 5.0.2's standard-ABI header: same prototypes, same values.
b=$1 src=$2
ref=/opt/peers/mpich/include/mpi_abi.h
[ -f $ref ] || { echo "SKIP: $ref missing (pip install mpich==5.0.2 into /opt/peers/mpich)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$src/tests/tools/abi_header.py" $ref "$tmp/abi_check.c" "$b/include/mpi.h" || exit 1
cc -std=c11 -Wall -Werror -I"$b/include" -o "$tmp/abi_check" "$tmp/abi_check.c" || exit 1
echo "mpi.h agrees with $ref"
