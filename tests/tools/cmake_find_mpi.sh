#!/bin/sh
# find_package(MPI) in a user project finds LeanMPI from its mpicc.
set -e
b=$1 project=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake -S "$project" -B "$tmp" -DMPI_C_COMPILER="$b/bin/mpicc" -DMPIEXEC_EXECUTABLE="$b/bin/mpiexec" > "$tmp/configure.log" 2>&1 || {
    cat "$tmp/configure.log"; exit 1; }
grep "MPI_C_" "$tmp/configure.log"
grep -q "MPI_C_LIBRARIES=$b/lib/libmpi_abi.so" "$tmp/configure.log" || { echo "FAIL: FindMPI did not pick LeanMPI"; exit 1; }
grep -q "MPI_C_VERSION=5.0" "$tmp/configure.log" || { echo "FAIL: FindMPI did not see MPI 5.0"; exit 1; }
cmake --build "$tmp" > "$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
out=$("$b/bin/mpiexec" --timeout 60 -n 4 "$tmp/app")
echo "$out"
[ "$out" = "cmake app: sum of ranks 6" ]
