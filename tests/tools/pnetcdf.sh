#!/bin/sh
# PnetCDF (parallel netCDF over MPI-IO) built with LeanMPI's mpicc (and
# mpif77/mpif90 for its Fortran interfaces) from
# Debian's source archive, then its own tests: `make check` (each test
# program as one process) and `make ptest` (its parallel tests under our
# mpiexec, with 3, 4 and 6 processes).
#
#   tests/tools/pnetcdf.sh [BUILD_DIR] [VERSION]
#
# Prints one summary line and exits non-zero when a test fails, 77 (CTest:
# skipped) when the source cannot be fetched or autotools are missing.
set -u
b=$(cd "${1:-build}" && pwd)
version=${2:-1.12.3}
src="$b/pnetcdf-src"
tarball="pnetcdf_$version.orig.tar.xz"
url="http://deb.debian.org/debian/pool/main/p/pnetcdf/$tarball"
skip() { echo "pnetcdf.sh: $1: skipped"; exit 77; }
command -v autoreconf >/dev/null || skip "autoreconf is not installed (Debian: autoconf automake libtool)"
mkdir -p "$src"
if [ ! -f "$src/$tarball" ]; then
    echo "pnetcdf.sh: fetching $url (once; kept in $src)"
    curl -fsSL -o "$src/$tarball.part" "$url" && mv "$src/$tarball.part" "$src/$tarball" || skip "cannot download $url"
fi
dir="$src/pnetcdf-$version"
# Its Fortran 77 and 90 interfaces and their tests too, built with our
# mpif77/mpif90, where LeanMPI was built with Fortran.
fortran="--disable-fortran"
[ -x "$b/bin/mpifort" ] && fortran="--enable-fortran MPIF77=$b/bin/mpif77 MPIF90=$b/bin/mpif90"
if [ ! -f "$dir/src/libs/libpnetcdf.la" ] || ! grep -q -- "$fortran" "$dir/config.log" 2>/dev/null; then
    rm -rf "$dir"
    (cd "$src" && tar xJf "$tarball") || exit 1
    (cd "$dir" && autoreconf -fi >"$src/autoreconf.log" 2>&1) || { echo "pnetcdf.sh: autoreconf failed ($src/autoreconf.log)"; exit 1; }
    # -O0: these tests check LeanMPI, not the compiler; PnetCDF's large
    # generated sources took 6 minutes at its default -O2 (70 s at -O0).
    (cd "$dir" && ./configure $fortran --disable-cxx --disable-shared MPICC="$b/bin/mpicc" \
        CFLAGS=-O0 FFLAGS=-O0 FCFLAGS=-O0 TESTMPIRUN="$b/bin/mpiexec --oversubscribe -n NP" >"$src/configure.log" 2>&1) ||
        { echo "pnetcdf.sh: configure failed ($src/configure.log)"; exit 1; }
    (cd "$dir" && make -j2 >"$src/make.log" 2>&1) || { echo "pnetcdf.sh: make failed ($src/make.log)"; exit 1; }
fi
export TMPDIR=${TMPDIR:-/tmp}
out="$TMPDIR/lmpi-pnetcdf-$$"
mkdir -p "$out" || exit 1
status=0
for t in check ptest; do
    log="$src/make-$t.log"
    (cd "$dir" && timeout 1200 make -j1 $t TESTOUTDIR="$out" >"$log" 2>&1)
    rc=$?
    # test programs print "------ pass"; automake's harness "PASS:"/"FAIL:"
    pass=$(grep -cE -- '------ pass|^PASS:' "$log")
    fail=$(grep -cE -- '------ fail|^FAIL:|^ERROR:' "$log")
    fpass=$(grep -cE -- 'TESTING F(77|90) .*------ pass|^PASS: .*f(77|90)|F90 parallel run.*pass' "$log")
    echo "pnetcdf $t: exit $rc, $pass passed ($fpass of them Fortran programs), $fail failed (log $log)"
    [ $rc = 0 ] || status=1
done
rm -rf "$out"
exit $status
