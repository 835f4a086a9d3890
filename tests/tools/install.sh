#!/bin/sh
# make install PREFIX=... gives a tree that builds and runs programs, with pkg-config.
set -e
b=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$b" --prefix "$tmp/prefix" > "$tmp/install.log"
for f in bin/mpiexec bin/mpicc bin/mpicxx bin/leanmpi_info bin/leanmpi-ftwrap include/mpi.h lib/libmpi_abi.so.1 lib/libmpi.so lib/pkgconfig/leanmpi.pc; do
    [ -e "$tmp/prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
"$tmp/prefix/bin/mpicc" -o "$tmp/hello" "$src"
"$tmp/prefix/bin/mpiexec" --timeout 60 -n 2 "$tmp/hello" | grep -q "hello from rank 1 of 2"
if command -v pkg-config >/dev/null 2>&1; then
    flags=$(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs leanmpi)
    echo "pkg-config: $flags"
    cc -o "$tmp/hello_pc" "$src" $flags
    "$tmp/prefix/bin/mpiexec" --timeout 60 -n 2 "$tmp/hello_pc" | grep -q "hello from rank 0 of 2"
fi
# Fortran, where it was built: the wrapper finds mpif.h and the mpi module
if [ -e "$b/lib/libmpifort_abi.so" ]; then
    for f in bin/mpifort bin/mpif90 bin/mpif77 include/mpif.h include/mpi.mod lib/libmpifort_abi.so.1; do
        [ -e "$tmp/prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
    done
    fsrc=$(dirname "$0")/../fortran
    "$tmp/prefix/bin/mpif90" -o "$tmp/f90" "$fsrc/t_f90.f90"
    "$tmp/prefix/bin/mpiexec" --timeout 60 -n 2 "$tmp/f90" | grep -q "t_f90: passed"
    "$tmp/prefix/bin/mpif77" -o "$tmp/f77" "$fsrc/t_f77.f"
    "$tmp/prefix/bin/mpiexec" --timeout 60 -n 2 "$tmp/f77" | grep -q "t_f77: passed"
    if command -v pkg-config >/dev/null 2>&1; then
        fflags=$(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs mpi-fort)
        echo "pkg-config mpi-fort: $fflags"
        gfortran -o "$tmp/f90_pc" "$fsrc/t_f90.f90" $fflags
        "$tmp/prefix/bin/mpiexec" --timeout 60 -n 2 "$tmp/f90_pc" | grep -q "t_f90: passed"
    fi
    echo "install: Fortran passed"
fi
echo "install: passed"
