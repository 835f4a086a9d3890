#!/bin/sh
# Quantum ESPRESSO 6.7's plane-wave code (pw.x), a large public Fortran MPI
# program (`use mpi`, MPI_COMM_SPLIT, collectives, FFT transposes),
# built unchanged with our mpifort from Debian's source archive, then checked
# against its own benchmarks by its own test harness (testcode): the pw_scf
# category (20 calculations) at 2 ranks and pw_dft (11) at 3, more ranks than
# cores.  The pseudopotential those need and the source tree lacks
# (Si.pz-vbc.UPF) comes from Debian's quantum-espresso-data package.
#
#   tests/tools/qe.sh [BUILD_DIR]
#
# Prints one summary line per category and exits non-zero when a
# calculation fails its benchmark, 77 (CTest: skipped) when the sources
# cannot be fetched or BLAS/LAPACK/FFTW are not installed.
set -u
b=$(cd "${1:-build}" && pwd)
src="$b/qe-src"
pool=http://deb.debian.org/debian/pool/main/e/espresso
tarball=espresso_6.7.orig.tar.gz
data=quantum-espresso-data_6.7-2_all.deb
skip() { echo "qe.sh: $1: skipped"; exit 77; }
[ -x "$b/bin/mpifort" ] || skip "LeanMPI was built without Fortran (no Fortran compiler)"
for lib in libblas.so liblapack.so libfftw3.so; do
    [ -n "$(find /usr/lib /usr/lib64 -maxdepth 2 -name $lib 2>/dev/null | head -1)" ] || skip "$lib missing (Debian: libblas-dev liblapack-dev libfftw3-dev)"
done
command -v python3 >/dev/null || skip "python3 missing (QE's test harness)"
mkdir -p "$src"
for f in $tarball $data; do
    if [ ! -f "$src/$f" ]; then
        echo "qe.sh: fetching $pool/$f (once; kept in $src)"
        curl -fsSL -o "$src/$f.part" "$pool/$f" && mv "$src/$f.part" "$src/$f" || skip "cannot download $pool/$f"
    fi
done
dir="$src/qe-6.7"
if [ ! -x "$dir/PW/src/pw.x" ]; then
    rm -rf "$dir"
    (cd "$src" && tar xzf $tarball) || exit 1
    # -O1 without QE's default -O3 -g: the build is most of this test (idle:
    # 195 s in all at -O1, 250 s at -O2), and the SCF runs take as long
    (cd "$dir" && ./configure MPIF90="$b/bin/mpifort" CC=gcc F77=gfortran --with-scalapack=no FFLAGS=-O1 \
        >"$src/configure.log" 2>&1) || { echo "qe.sh: configure failed ($src/configure.log)"; exit 1; }
    grep -q "__MPI" "$dir/make.inc" || { echo "qe.sh: configure did not enable MPI ($dir/make.inc)"; exit 1; }
    (cd "$dir" && make -j2 pw >"$src/make.log" 2>&1) || { echo "qe.sh: make pw failed ($src/make.log)"; exit 1; }
fi
if [ ! -f "$dir/pseudo/Si.pz-vbc.UPF" ]; then
    rm -rf "$src/data" && mkdir -p "$src/data" && dpkg-deb -x "$src/$data" "$src/data" || exit 1
    upf=$(find "$src/data" -name Si.pz-vbc.UPF.gz | head -1)
    [ -n "$upf" ] && gzip -dc "$upf" >"$dir/pseudo/Si.pz-vbc.UPF" || { echo "qe.sh: no Si.pz-vbc.UPF in $data"; exit 1; }
fi

# QE's harness runs "mpirun -np N pw.x": mpirun is our mpiexec here
export TMPDIR=${TMPDIR:-/tmp}
wrap=$(mktemp -d "$TMPDIR/lmpi-qe-XXXXXX") || exit 1
trap 'rm -rf "$wrap"' EXIT
printf '#!/bin/sh\nexec "%s" --oversubscribe "$@"\n' "$b/bin/mpiexec" >"$wrap/mpirun"
chmod +x "$wrap/mpirun"
mkdir -p "$wrap/tmp"
status=0
cd "$dir/test-suite" || exit 1
sed "s|XXXXXX|$dir|g" userconfig.tmp >userconfig
for run in pw_scf:2 pw_dft:3; do
    cat=${run%:*} np=${run#*:}
    log="$src/$cat.log"
    rm -f $cat/test.out.* $cat/test.err.* $cat/CRASH
    PATH="$wrap:$PATH" ESPRESSO_ROOT="$dir" ESPRESSO_PSEUDO="$dir/pseudo" ESPRESSO_TMPDIR="$wrap/tmp" \
        TESTCODE_NPROCS=$np QE_USE_MPI=1 OMP_NUM_THREADS=1 \
        timeout 1200 python3 testcode/bin/testcode.py --category=$cat >"$log" 2>&1
    summary=$(grep -E 'out of [0-9]+ tests passed' "$log" | tail -1)
    echo "quantum-espresso $cat at $np ranks: ${summary:-no summary} (log $log)"
    echo "$summary" | grep -qE '^All done\. ([0-9]+) out of \1 tests passed' || { grep -B1 -A3 FAILED "$log" | head -30; status=1; }
done
exit $status
