#!/bin/sh
# Parallel HDF5 (Debian's source of 1.10.8) built with LeanMPI's mpicc, then
# its parallel test suite (testpar: t_mpi's MPI-IO checks, testphdf5,
# t_cache, t_cache_image, t_pflush, t_pread, t_shapesame, t_filters_parallel,
# t_bigio ...) under our mpiexec with 4 processes; where LeanMPI has Fortran
# (build/bin/mpifort), also the Fortran interface, built with our mpifort,
# and its parallel Fortran tests (fortran/testpar: parallel_test, hyperslab
# and multiple-dataset writes, independent and collective).
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
fortran=--disable-fortran built="$dir/test/libh5test.la"
if [ -x "$b/bin/mpifort" ]; then
    fortran="--enable-fortran FC=$b/bin/mpifort" built="$dir/fortran/test/libh5test_fortran.la"
else
    echo "hdf5.sh: LeanMPI has no Fortran (no Fortran compiler): HDF5's Fortran tests skipped"
fi
if [ ! -f "$built" ]; then
    rm -rf "$dir"
    (cd "$src" && tar xzf "$tarball") || exit 1
    # RUNPARALLEL at configure time also reaches the test scripts (testpflush.sh).
    # Production mode's -O3 stays: at -O0 its tests' own computing (t_cache,
    # t_cache_image) took over 30 minutes instead of 8.
    (cd "$dir" && CC="$b/bin/mpicc" RUNPARALLEL="$b/bin/mpiexec --oversubscribe -n \$\${NPROCS:=6}" \
        ./configure --enable-parallel $fortran --disable-cxx --disable-java \
        --disable-hl --disable-shared --enable-build-mode=production >"$src/configure.log" 2>&1) ||
        { echo "hdf5.sh: configure failed ($src/configure.log)"; exit 1; }
    (cd "$dir" && make -j2 -C src >"$src/make.log" 2>&1 && make -j2 -C test libh5test.la >>"$src/make.log" 2>&1) ||
        { echo "hdf5.sh: make failed ($src/make.log)"; exit 1; }
    if [ "$fortran" != --disable-fortran ]; then
        (cd "$dir" && make -j2 -C fortran/src >>"$src/make.log" 2>&1 &&
            make -j2 -C fortran/test libh5test_fortran.la >>"$src/make.log" 2>&1) ||
            { echo "hdf5.sh: make of the Fortran interface failed ($src/make.log)"; exit 1; }
    fi
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
if [ "$fortran" != --disable-fortran ]; then
    cd "$dir/fortran/testpar" || exit 1
    rm -f ./*.chklog ./*.chkexe
    NPROCS=4 HDF5_PARAPREFIX="$out" timeout 900 make check >"$src/fcheck.log" 2>&1
    frc=$?
    passed=$(grep -c "PASSED" "$src/fcheck.log") failed=$(grep -cE "FAILED|failed" "$src/fcheck.log")
    echo "hdf5 fortran/testpar parallel_test (4 ranks): $passed PASSED, $failed failure lines, make check exit $frc" \
         "(log $src/fcheck.log)"
    [ $frc = 0 ] && [ "$passed" -gt 0 ] && [ "$failed" = 0 ] || rc=1
fi
rm -rf "$out"
exit $rc
