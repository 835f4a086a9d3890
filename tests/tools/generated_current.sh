#!/bin/sh
# Generated files in the repository match their sources: the bindings and
# mpi.h (signature and constant tables) and docs/env.md (the config table).
src=$1 b=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
"$b/bin/leanmpi_info" --config-markdown > "$tmp/env.md"
cmp -s "$tmp/env.md" "$src/docs/env.md" || { echo "FAIL: docs/env.md is stale: run make docs"; fail=1; }
if command -v python3 >/dev/null 2>&1; then
    python3 "$src/src/binding/gen_bindings.py" "$tmp" || exit 1
    for f in include/mpi.h src/binding/gen/bindings.c src/binding/gen/impl.h src/binding/gen/names.c; do
        cmp -s "$tmp/$f" "$src/$f" || { echo "FAIL: $f is stale: run make generate"; fail=1; }
    done
else
    echo "note: python3 missing, bindings not regenerated"
fi
# the Fortran bindings, from the MPI Forum's apis.json (pympistandard)
py=/opt/peers/pympistandard/bin/python3
if [ -x $py ]; then
    $py "$src/src/fortran/gen_fortran.py" "$tmp" >/dev/null || exit 1
    for f in src/fortran/gen/mpif_procs.c include/fortran/mpif.h src/fortran/gen/mpi_consts.fh \
             src/fortran/gen/mpi_interfaces.fh src/fortran/gen/skipped.txt src/fortran/gen/mpif08_procs.c \
             src/fortran/gen/mpi_f08_consts.fh src/fortran/gen/mpi_f08_cprocs.fh \
             src/fortran/gen/mpi_f08_generics.fh src/fortran/gen/mpi_f08_procs.fh src/fortran/gen/fortran_procs.h; do
        cmp -s "$tmp/$f" "$src/$f" || { echo "FAIL: $f is stale: run make generate"; fail=1; }
    done
else
    echo "note: pympistandard missing ($py), Fortran bindings not regenerated"
fi
[ $fail = 0 ] && echo "generated files: current"
exit $fail
