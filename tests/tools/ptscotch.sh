#!/bin/sh
# PT-Scotch 7.0.3 (Debian's source archive), the distributed graph
# partitioner, built unchanged with our mpicc as Debian builds it (threads
# that call MPI: MPI_THREAD_MULTIPLE, nonblocking collectives), then its own
# parallel checks (`make ptcheck`: distributed graphs scattered and
# gathered back, partitioned, ordered, coarsened, induced and band graphs,
# at 3 and 4 ranks, each checked by the program or by diff against the
# input) under our mpiexec, more ranks than cores.
#
#   tests/tools/ptscotch.sh [BUILD_DIR]
#
# Exits non-zero when a check fails, 77 (CTest: skipped) when the source
# cannot be fetched or bison, flex or zlib are missing.
set -u
b=$(cd "${1:-build}" && pwd)
src="$b/ptscotch-src"
url=http://deb.debian.org/debian/pool/main/s/scotch/scotch_7.0.3.orig.tar.xz
skip() { echo "ptscotch.sh: $1: skipped"; exit 77; }
for t in bison flex; do
    command -v $t >/dev/null || skip "$t missing (Debian: bison flex)"
done
[ -f /usr/include/zlib.h ] || skip "zlib.h missing (Debian: zlib1g-dev)"
mkdir -p "$src"
if [ ! -f "$src/scotch.tar.xz" ]; then
    echo "ptscotch.sh: fetching $url (once; kept in $src)"
    curl -fsSL -o "$src/scotch.tar.xz.part" "$url" && mv "$src/scotch.tar.xz.part" "$src/scotch.tar.xz" ||
        skip "cannot download $url"
fi
dir="$src/scotch-7.0.3/src"
if [ ! -f "$src/scotch-7.0.3/lib/libptscotch.a" ]; then
    rm -rf "$src/scotch-7.0.3"
    (cd "$src" && tar xJf scotch.tar.xz) || exit 1
    # Scotch's own Linux settings (threads, MPI from threads, 64-bit
    # indices), our mpicc for everything that includes mpi.h; -O1: the
    # build is most of this test
    sed -e "s|^CCP.*|CCP = $b/bin/mpicc|" -e "s|^CCD.*|CCD = $b/bin/mpicc|" -e 's/-O3/-O1/' \
        "$dir/Make.inc/Makefile.inc.x86-64_pc_linux2" >"$dir/Makefile.inc"
    (cd "$dir" && make -j2 ptscotch >"$src/make.log" 2>&1) || { echo "ptscotch.sh: make failed ($src/make.log)"; exit 1; }
fi
log="$src/ptcheck.log"
(cd "$dir" && timeout 900 make ptcheck EXECPPROG="$b/bin/mpiexec" EXECPFLAGS=--oversubscribe >"$log" 2>&1)
status=$?
runs=$(grep -c "^$b/bin/mpiexec " "$log")
if [ $status != 0 ] || [ "$runs" -lt 20 ]; then
    tail -20 "$log"
    echo "ptscotch: make ptcheck failed (status $status, $runs parallel runs; $log)"
    exit 1
fi
echo "ptscotch: make ptcheck passed ($runs parallel runs at 3 and 4 ranks; $log)"
