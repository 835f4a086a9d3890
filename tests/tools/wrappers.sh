#!/bin/sh
# The compiler wrappers answer both MPICH-style and Open MPI-style queries and
# build programs that run under mpiexec.
set -e
b=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
show=$("$b/bin/mpicc" -show foo.c -o foo)
echo "mpicc -show: $show"
echo "$show" | grep -q -- "-I$b/include" || fail "-show lacks the include dir"
echo "$show" | grep -q -- "-lmpi_abi" || fail "-show lacks -lmpi_abi"
echo "$show" | grep -q "foo.c -o foo" || fail "-show lacks the arguments"
[ "$("$b/bin/mpicc" --showme:compile)" = "-I$b/include" ] || fail "--showme:compile"
"$b/bin/mpicc" --showme:link | grep -q -- "-L$b/lib" || fail "--showme:link"
"$b/bin/mpicc" -compile_info | grep -q -- "-I$b/include" || fail "-compile_info"
"$b/bin/mpicc" -link_info | grep -q -- "-lmpi_abi" || fail "-link_info"
"$b/bin/mpicc" -showme -c x.c | grep -qv -- "-lmpi_abi" || fail "-c must not add link flags"
[ "$("$b/bin/mpicc" --showme:libs)" = "mpi_abi" ] || fail "--showme:libs"
# --version: ours, then the wrapped compiler's own (as MPICH's and Open MPI's)
v=$("$b/bin/mpicc" --version)
echo "$v" | head -1 | grep -q "^LeanMPI" || fail "--version lacks LeanMPI's line"
[ "$(echo "$v" | sed -n 2p)" = "$(cc --version | head -1)" ] || fail "--version hides the compiler's version"
cat > "$tmp/h.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int r, s;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    printf("wrapped %d/%d\n", r, s);
    MPI_Finalize();
    return 0;
}
C
"$b/bin/mpicc" -O2 -o "$tmp/h" "$tmp/h.c"
"$b/bin/mpiexec" --timeout 60 -n 2 "$tmp/h" | sort > "$tmp/out"
printf 'wrapped 0/2\nwrapped 1/2\n' | cmp -s - "$tmp/out" || fail "mpicc-built program output: $(cat "$tmp/out")"
if command -v c++ >/dev/null 2>&1; then
    cp "$tmp/h.c" "$tmp/h.cpp"
    "$b/bin/mpicxx" -o "$tmp/hxx" "$tmp/h.cpp"
    "$b/bin/mpiexec" --timeout 60 -n 2 "$tmp/hxx" | grep -q "wrapped 1/2" || fail "mpicxx-built program"
fi
echo "wrappers: passed"
