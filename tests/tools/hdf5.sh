#!/bin/sh
# Parallel HDF5 (Debian's source of 1.10.8) built with LeanMPI's mpicc, then
# its parallel test suite (testpar: t_mpi's MPI-IO checks, testphdf5,
# t_cache, t_cache_image, t_pflush, t_pread, t_shapesame, t_filters_parallel,
# t_bigio ...) under our mpiexec with 4 processes.
#
#   tests/tools/hdf5.sh [BUILD_DIR] [VERSION]
#
# Prints one line per test program and exits non-zero when one fails, 77
# (CTest: skipped) when the source cannot be fetched.
set -u
b=$(cd "${1:-build}" && pwd)
version=${2:-1.10.8+repack1}
src="$b/hdf5-src"
tarball="hdf5_$version.orig.tar.gz"
url="http://deb.debian.org/debian/pool/main/h/hdf5/$tarball"
skip() { echo "hdf5.sh: $1: skipped"; exit 77; }
mkdir -p "$src"
if [ ! -f "$src/$tarball" ]; then
    echo "hdf5.sh: fetching $url (once; kept in $src)"
    curl -fsSL -o "$src/$tarball.part" "$url" && mv "$src/$tarball.part" "$src/$tarball" || skip "cannot download $url"
fi
dir="$src/hdf5-$version"
if [ ! -f "$dir/test/libh5test.la" ]; then
    rm -rf "$dir"
    (cd "$src" && tar xzf "$tarball") || exit 1
    # RUNPARALLEL at configure time also reaches the test scripts (testpflush.sh)
    (cd "$dir" && CC="$b/bin/mpicc" RUNPARALLEL="$b/bin/mpiexec --oversubscribe -n \$\${NPROCS:=6}" \
        ./configure --enable-parallel --disable-fortran --disable-cxx --disable-java \
        --disable-hl --disable-shared --enable-build-mode=production >"$src/configure.log" 2>&1) ||
        { echo "hdf5.sh: configure failed ($src/configure.log)"; exit 1; }
    (cd "$dir" && make -j2 -C src >"$src/make.log" 2>&1 && make -j2 -C test libh5test.la >>"$src/make.log" 2>&1) ||
        { echo "hdf5.sh: make failed ($src/make.log)"; exit 1; }
fi
out="${TMPDIR:-/tmp}/lmpi-hdf5-$$"
mkdir -p "$out" || exit 1
cd "$dir/testpar" || exit 1
rm -f ./*.chklog ./*.chkexe
NPROCS=4 HDF5_PARAPREFIX="$out" timeout 1800 make check >"$src/check.log" 2>&1
rc=$?
for f in ./*.chklog; do
    echo "hdf5 testpar $(basename "$f" .chklog): $(grep -cE 'FAILED|failed' "$f") failure lines"
done
echo "hdf5 testpar: make check exit $rc (log $src/check.log)"
rm -rf "$out"
exit $rc
