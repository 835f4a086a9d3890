# Sourced by mpich_fortran.sh and mpich_c.sh: MPICH 4.0.2's test suite
# (test/mpi of Debian's source archive, fetched once into BUILD/mpich-src),
# configured with our wrappers and its helper libraries built.  Sets $src
# and $dir (test/mpi); calls skip (defined by the caller) when the source
# cannot be fetched.
version=4.0.2
src="$b/mpich-src"
tarball="mpich_$version.orig.tar.xz"
url="http://deb.debian.org/debian/pool/main/m/mpich/$tarball"
mkdir -p "$src"
if [ ! -f "$src/$tarball" ]; then
    echo "mpich_suite.sh: fetching $url (once; kept in $src)"
    curl -fsSL -o "$src/$tarball.part" "$url" && mv "$src/$tarball.part" "$src/$tarball" || skip "cannot download $url"
fi
dir="$src/mpich-$version/test/mpi"
if [ ! -f "$dir/util/libmtest.la" ] || { [ -x "$b/bin/mpifort" ] && [ ! -f "$dir/util/libmtest_f08.la" ]; }; then
    rm -rf "$src/mpich-$version"
    (cd "$src" && tar xJf "$tarball" "mpich-$version/test/mpi") || exit 1
    fortran=--disable-fortran
    [ -x "$b/bin/mpifort" ] && fortran=--enable-fortran=all
    # -O0: the programs check LeanMPI, not the compiler; compiling is most of the time
    (cd "$dir" && ./configure MPICC="$b/bin/mpicc" MPIF77="$b/bin/mpif77" MPIFC="$b/bin/mpifort" \
        CFLAGS=-O0 FFLAGS=-O0 FCFLAGS=-O0 $fortran --disable-cxx --disable-perftest --disable-ft-tests >"$src/configure.log" 2>&1) ||
        { echo "mpich_suite.sh: configure failed ($src/configure.log)"; exit 1; }
    # the suite builds its f08 directory only inside MPICH's own tree: its
    # helper library's rules are there, commented out
    [ -x "$b/bin/mpifort" ] &&
        sed -i 's/^#\(am__append_4 = libmtest_f08.la\)/\1/; s/^#\(am_libmtest_f08_la_OBJECTS\)/\1/;
                s/^#\(am_libmtest_f08_la_rpath\)/\1/; s/^#\(libmtest_f08_la_SOURCES\)/\1/' "$dir/util/Makefile"
    make -C "$dir/util" -j2 >"$src/make.log" 2>&1 || { echo "mpich_suite.sh: make util failed"; exit 1; }
fi

# run_suite NAME DIRS...: builds (make -k: the programs that do not compile
# are in EXPECTED) and runs each directory with MPICH's runtests under our
# mpiexec (at most MPICH_NP ranks, 4 unless the caller sets it; a test
# that asks for more runs with that many), then reports every failure not
# in EXPECTED ("name reason" lines, set by the caller; a name may be
# qualified by its directory, DIR/name).  Sets fail=1 on one.
run_suite() {
    name=$1
    shift
    total_ok=0 total_bad=0 fail=0
    for d in "$@"; do
        make -k -j2 -C "$dir/$d" >>"$src/make.log" 2>&1
        # tests that would hang here (SKIP, "name reason" lines set by the
        # caller) leave the lists runtests reads
        for t in $(echo "${SKIP:-}" | awk 'NF {print $1}'); do
            find "$dir/$d" -name testlist -exec sed -i "/^$t /d" {} +
        done
        tap="$src/$(echo "$d" | tr / _).tap"
        (cd "$dir/$d" && MPITEST_MPIEXECARG=--oversubscribe timeout 1500 "$dir/runtests" -srcdir=. -tests=testlist \
            -mpiexec="$b/bin/mpiexec" -maxnp="${MPICH_NP:-4}" -tapfile="$tap" >"$src/run_$(echo "$d" | tr / _).log" 2>&1)
        ok=$(grep -c '^ok' "$tap") bad=$(grep -c '^not ok' "$tap")
        total_ok=$((total_ok + ok)) total_bad=$((total_bad + bad))
        echo "mpich $d: $ok passed, $bad failed"
        for t in $(sed -n 's/^not ok *- \.\/\([^ ]*\) .*/\1/p' "$tap" | sort -u); do
            why=$(echo "$EXPECTED" | sed -n "s|^$d/$(basename "$t") ||p" | head -1)
            [ -n "$why" ] || why=$(echo "$EXPECTED" | sed -n "s|^$(basename "$t") ||p" | head -1)
            if [ -n "$why" ]; then
                echo "  expected failure $d/$t: $why"
            else
                echo "  FAIL $d/$t (log $tap)"
                fail=1
            fi
        done
    done
    echo "${SKIP:-}" | awk 'NF {t = $1; $1 = ""; print "  not run " t ":" $0}'
    echo "mpich $name suite: $total_ok passed, $total_bad failed (all failures expected: $([ $fail = 0 ] && echo yes || echo no))"
}
