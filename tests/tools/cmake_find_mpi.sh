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
[ "$out" = "cmake app: sum of ranks 6" ] || { echo "FAIL: the C app"; exit 1; }
# Fortran, where it was built: the header and both modules are found
if [ -x "$b/bin/mpifort" ]; then
    f=$(dirname "$project")/find_mpi_fortran_project
    cmake -S "$f" -B "$tmp/f" -DMPI_Fortran_COMPILER="$b/bin/mpifort" -DMPI_C_COMPILER="$b/bin/mpicc" \
        > "$tmp/fconfigure.log" 2>&1 || { cat "$tmp/fconfigure.log"; exit 1; }
    grep "MPI_Fortran_" "$tmp/fconfigure.log"
    for v in MPI_Fortran_HAVE_F77_HEADER MPI_Fortran_HAVE_F90_MODULE MPI_Fortran_HAVE_F08_MODULE; do
        grep -q "$v=TRUE" "$tmp/fconfigure.log" || { echo "FAIL: $v is not TRUE"; exit 1; }
    done
    grep -q "MPI_Fortran_LIBRARIES=$b/lib/libmpifort_abi.so" "$tmp/fconfigure.log" ||
        { echo "FAIL: FindMPI did not pick LeanMPI's Fortran library"; exit 1; }
    cmake --build "$tmp/f" > "$tmp/fbuild.log" 2>&1 || { cat "$tmp/fbuild.log"; exit 1; }
    fout=$("$b/bin/mpiexec" --timeout 60 -n 4 "$tmp/f/fapp")
    echo "$fout"
    [ "$fout" = "cmake fortran app: sum of ranks 6" ]
fi
