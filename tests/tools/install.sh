#!/bin/sh
# make install PREFIX=... gives a tree that builds and runs programs, with pkg-config.
set -e
b=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$b" --prefix "$tmp/prefix" > "$tmp/install.log"
for f in bin/mpiexec bin/mpicc bin/mpicxx bin/leanmpi_info include/mpi.h lib/libmpi_abi.so.1 lib/libmpi.so lib/pkgconfig/leanmpi.pc; do
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
echo "install: passed"
