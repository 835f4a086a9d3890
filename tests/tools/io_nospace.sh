#!/bin/sh
# MPI_ERR_NO_SPACE on a full file system: mounts a 2 MiB tmpfs in a private
# mount namespace and runs `t_io nospace DIR` on it (collective writes until
# the file system is full, then checks that every earlier write reads back).
#
#   tests/tools/io_nospace.sh MPIEXEC T_IO [RANKS]
#
# Exits 77 (CTest: skipped) where a mount namespace or a tmpfs cannot be made
# (not root, or a container without CAP_SYS_ADMIN).
set -u
mpiexec=$1 t_io=$2 n=${3:-2}
dir=$(mktemp -d /tmp/lmpi-nospace.XXXXXX) || exit 1
trap 'rmdir "$dir" 2>/dev/null' EXIT
if ! unshare -m sh -c "mount -t tmpfs -o size=2m tmpfs '$dir'" 2>/dev/null; then
    echo "io_nospace.sh: cannot mount a tmpfs in a mount namespace here: skipped"
    exit 77
fi
unshare -m sh -c "mount -t tmpfs -o size=2m tmpfs '$dir' && '$mpiexec' --timeout 60 -n $n '$t_io' nospace '$dir'"
