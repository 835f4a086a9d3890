#!/bin/sh
# mpi4py's own test suite against LeanMPI: builds mpi4py from PyPI's source
# with our mpicc into a virtual environment under build/, then runs
# test/main.py as a singleton and under mpiexec -n 2 and -n 3, under Hydra
# (PMI-1 and PMI-2) where mpiexec.hydra is installed, and with
# MPI4PY_HOSTS=1 (CTest sets it where libfabric was found) across two
# emulated hosts (tests/tools/hosts.sh; skipped where namespaces cannot be
# made), dynamic processes between hosts included.
#
#   tests/tools/mpi4py.sh [BUILD_DIR] [VERSION]
#
# Nothing is left out.  mpi4py.futures (demo/futures/test_futures.py) runs too: its
# pool starts its workers with MPI_Comm_spawn.
# Prints one summary line per run (tests, failures, errors, skips) and
# exits non-zero when a run has a failure or an error, 77 (CTest: skipped)
# when mpi4py cannot be fetched or built here.
set -u
b=$(cd "${1:-build}" && pwd)
version=${2:-4.1.2}
venv="$b/mpi4py-venv"
src="$b/mpi4py-src"
export PATH="$b/bin:$PATH"

skip() { echo "mpi4py.sh: $1: skipped"; exit 77; }
if [ ! -x "$venv/bin/pip" ]; then
    python3 -m venv "$venv" || skip "no python3 venv"
fi
if [ ! -f "$src/mpi4py-$version.tar.gz" ]; then
    mkdir -p "$src"
    echo "mpi4py.sh: fetching mpi4py $version's source from PyPI (once; kept in $src)"
    "$venv/bin/pip" download -q --no-deps --no-binary :all: -d "$src" "mpi4py==$version" || skip "cannot download mpi4py"
fi
# mpi4py built against the standard ABI (MPI_ABI_VERSION) enables its
# User-Level Failure Mitigation wrappers only for the MPICH and Open MPI it
# recognises; its own PyMPI_HAVE_MPIX_ macros (src/lib-mpi/mpiulfm.h) tell it
# that ours are there (src/ft), so test_ulfm.py runs instead of skipping.
ulfm=""
for f in ERR_REVOKED ERR_PROC_FAILED ERR_PROC_FAILED_PENDING Comm_revoke Comm_is_revoked Comm_agree \
         Comm_iagree Comm_shrink Comm_ishrink Comm_get_failed Comm_ack_failed; do
    ulfm="$ulfm -DPyMPI_HAVE_MPIX_$f=1"
done
# (a build from before these flags cannot revoke: built again)
if ! "$venv/bin/python" -c "from mpi4py import MPI; MPI.COMM_SELF.Dup().Revoke()" 2>/dev/null; then
    "$venv/bin/pip" install -q setuptools wheel 'Cython>=3.0.1' || skip "cannot install Cython"
    # -O0 -g0: its generated MPI.c took most of this test's time at -O2 -g,
    # and the suite checks LeanMPI, not the compiler
    CFLAGS="$ulfm -O0 -g0" MPICC="$b/bin/mpicc" "$venv/bin/pip" install -q --force-reinstall --no-deps --no-build-isolation \
        --no-binary mpi4py "$src/mpi4py-$version.tar.gz" || exit 1
fi
# The packages its tests use when they are there: NumPy arrays as buffers
# (every typecode, complex and long double included), cffi buffers, dill
# and YAML pickling.  Without them about 35 tests a run are skipped; the
# rest of the skips need a GPU (CuPy, Numba's CUDA arrays) or another
# number of processes.
if ! "$venv/bin/python" -c "import numpy, cffi, dill, yaml" 2>/dev/null; then
    "$venv/bin/pip" install -q numpy cffi dill pyyaml ||
        echo "mpi4py.sh: numpy, cffi, dill or pyyaml could not be installed: their tests are skipped"
fi
if [ ! -f "$src/mpi4py-$version/test/main.py" ]; then
    (cd "$src" && tar xzf "mpi4py-$version.tar.gz") || exit 1
fi
tests="$src/mpi4py-$version/test"

# Every chapter runs: no test module or test is left out.
missing=""

status=0
run() {
    label=$1
    shift
    log="$b/mpi4py-$label.log"
    case $label in
    futures*) (cd "$tests/../demo/futures" && timeout 900 "$@" "$venv/bin/python" test_futures.py) >"$log" 2>&1 ;;
    *) timeout 900 "$@" "$venv/bin/python" "$tests/main.py" $missing >"$log" 2>&1 ;;
    esac
    rc=$?
    ran=$(grep -o 'Ran [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    fails=$(grep -o 'failures=[0-9]*' "$log" | tail -1 | cut -d= -f2)
    errs=$(grep -o 'errors=[0-9]*' "$log" | tail -1 | cut -d= -f2)
    skips=$(grep -o 'skipped=[0-9]*' "$log" | tail -1 | cut -d= -f2)
    echo "mpi4py $label: tests ${ran:-?} failures ${fails:-0} errors ${errs:-0} skipped ${skips:-0} (exit $rc, log $log)"
    if [ "$rc" != 0 ]; then
        status=1
        # CI keeps only this test's output, not the log: show what failed
        # (unittest's FAIL/ERROR blocks, or the log's end when none)
        if grep -q '^\(FAIL\|ERROR\):' "$log"; then
            awk '/^(FAIL|ERROR):/ { show = 1 } /^(=====|Ran [0-9])/ { show = 0 } show' "$log" | head -n 120
        else
            tail -n 40 "$log"
        fi
    fi
}
run singleton env
run np2 "$b/bin/mpiexec" --timeout 850 -n 2
run np3 "$b/bin/mpiexec" --timeout 850 -n 3
# mpi4py.futures: MPIPoolExecutor spawns its workers (singleton: through the
# launcher a singleton starts on demand), and again under mpiexec -n 2
run futures-singleton env
run futures-np2 "$b/bin/mpiexec" --timeout 850 -n 2
# under MPICH's Hydra: its PMI-1, and PMI-2 (LMPI_PMI=2)
if command -v mpiexec.hydra >/dev/null; then
    run hydra-np2 env MPIEXEC_TIMEOUT=850 mpiexec.hydra -n 2
    run hydra-pmi2-np2 env MPIEXEC_TIMEOUT=850 LMPI_PMI=2 mpiexec.hydra -n 2
fi
here=$(cd "$(dirname "$0")" && pwd)
if [ "${MPI4PY_HOSTS:-0}" = 1 ] && sh "$here/hosts.sh" check >/dev/null 2>&1; then
    if sh "$here/hosts.sh" up 2; then
        # the hosts share this machine's 2 cores: waiting ranks yield at once
        run hosts-np2 env LMPI_SPIN_TIME=0 "$b/bin/mpiexec" --timeout 850 --launcher-exec "$here/netns-ssh" \
            --iface lmpibr0 --host lmpi-h0:1,lmpi-h1:1 -n 2
    else
        echo "mpi4py hosts-np2: could not make the emulated hosts"
        status=1
    fi
    sh "$here/hosts.sh" down
fi
exit $status
