#!/bin/sh
# The HPC Challenge benchmark (HPCC 1.5.0, Debian's source archive), a
# public C MPI program built unchanged with our mpicc: HPL (LU over a 2-D
# process grid), PTRANS (a parallel matrix transpose), MPIRandomAccess
# (updates sent in messages), MPIFFT, the STREAM and DGEMM kernels on every
# rank, and the ring latency/bandwidth tests.  Each checks its own result:
# HPL and PTRANS their scaled residuals, RandomAccess the table it updated,
# FFT the distance to the input after a forward and inverse transform,
# STREAM its arrays.  Run at 4 ranks (a 2x2 grid) and 3 (1x3), a small
# problem (N=1000): the checks, not the speed.
#
#   tests/tools/hpcc.sh [BUILD_DIR]
#
# Exits non-zero when a check fails, 77 (CTest: skipped) when the source
# cannot be fetched or BLAS is not installed.
set -u
b=$(cd "${1:-build}" && pwd)
src="$b/hpcc-src"
url=http://deb.debian.org/debian/pool/main/h/hpcc/hpcc_1.5.0.orig.tar.gz
skip() { echo "hpcc.sh: $1: skipped"; exit 77; }
[ -n "$(find /usr/lib /usr/lib64 -maxdepth 2 -name libblas.so 2>/dev/null | head -1)" ] ||
    skip "libblas.so missing (Debian: libblas-dev)"
mkdir -p "$src"
if [ ! -f "$src/hpcc.tar.gz" ]; then
    echo "hpcc.sh: fetching $url (once; kept in $src)"
    curl -fsSL -o "$src/hpcc.tar.gz.part" "$url" && mv "$src/hpcc.tar.gz.part" "$src/hpcc.tar.gz" || skip "cannot download $url"
fi
dir="$src/hpcc-1.5.0"
if [ ! -x "$dir/hpcc" ]; then
    rm -rf "$dir"
    (cd "$src" && tar xzf hpcc.tar.gz) || exit 1
    # HPL's make system wants a Make.<arch> naming the compiler and BLAS
    # (Fortran BLAS called from C: the Add_ convention)
    cat >"$dir/hpl/Make.leanmpi" <<EOF
SHELL = /bin/sh
CD = cd
CP = cp
LN_S = ln -s
MKDIR = mkdir
RM = /bin/rm -f
TOUCH = touch
ARCH = leanmpi
TOPdir = ../../..
INCdir = \$(TOPdir)/include
BINdir = \$(TOPdir)/bin/\$(ARCH)
LIBdir = \$(TOPdir)/lib/\$(ARCH)
HPLlib = \$(LIBdir)/libhpl.a
HPL_INCLUDES = -I\$(INCdir) -I\$(INCdir)/\$(ARCH)
HPL_LIBS = \$(HPLlib) -lblas -lm
HPL_DEFS = -DAdd_ -DF77_INTEGER=int -DStringSunStyle \$(HPL_INCLUDES)
CC = $b/bin/mpicc
CCNOOPT = \$(HPL_DEFS)
CCFLAGS = \$(HPL_DEFS) -O2 -fcommon
LINKER = $b/bin/mpicc
LINKFLAGS = \$(CCFLAGS)
ARCHIVER = ar
ARFLAGS = r
RANLIB = echo
EOF
    (cd "$dir" && make arch=leanmpi -j2 >"$src/make.log" 2>&1) || { echo "hpcc.sh: make failed ($src/make.log)"; exit 1; }
fi

status=0
for run in 4:2:2 3:1:3; do
    np=${run%%:*} pq=${run#*:}
    p=${pq%:*} q=${pq#*:}
    out="$src/run$np"
    rm -rf "$out" && mkdir -p "$out"
    # the sample input with its process grid set to P x Q
    awk -v p="$p" -v q="$q" 'NR == 11 {$1 = p} NR == 12 {$1 = q} {print}' "$dir/_hpccinf.txt" >"$out/hpccinf.txt"
    (cd "$out" && timeout 600 "$b/bin/mpiexec" --oversubscribe -n "$np" "$dir/hpcc" >run.log 2>&1) ||
        { echo "hpcc at $np ranks: mpiexec failed ($out/run.log)"; status=1; continue; }
    f="$out/hpccoutf.txt"
    bad=""
    grep -q '^Success=1$' "$f" || bad="$bad HPL"
    grep -qE 'FAILED|\(failed\)' "$f" && bad="$bad a-check-FAILED"
    grep -E '[0-9]+ tests completed and failed residual checks' "$f" | grep -qvE '^ *0 tests' && bad="$bad residuals"
    grep -E '^Node\(s\) with error' "$f" | grep -qv 'error 0$' && bad="$bad node-errors"
    grep -q 'Solution Validates' "$f" || bad="$bad STREAM"
    below() { awk -F= -v k="$1" -v max="$2" '$1 == k {seen = 1; ok = $2 + 0 < max + 0} END {exit !(seen && ok)}' "$f"; }
    below MPIFFT_maxErr 1e-9 || bad="$bad FFT"
    below MPIRandomAccess_ErrorsFraction 0.01 || bad="$bad RandomAccess"
    below PTRANS_residual 1e-9 || bad="$bad PTRANS"
    grep -q '^CommWorldProcs='"$np"'$' "$f" || bad="$bad size"
    summary=$(grep -E '^(HPL_Tflops|PTRANS_GBs|MPIRandomAccess_GUPs|MPIFFT_Gflops|RandomlyOrderedRingLatency_usec)=' "$f" |
        tr '\n' ' ')
    if [ -n "$bad" ]; then
        echo "hpcc at $np ranks (${p}x$q): FAILED:$bad ($f)"
        status=1
    else
        echo "hpcc at $np ranks (${p}x$q): every check passed; $summary"
    fi
done
exit $status
