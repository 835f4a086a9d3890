#!/usr/bin/env python3
"""Check include/mpi.h against another implementation's standard-ABI header.

abi_header.py REFERENCE_MPI_ABI_H OUT.c OUR_MPI_H checks both declare the
same functions and writes a C file that includes our
mpi.h and then (1) redeclares every MPI_/PMPI_ function of the reference with
the reference's prototype -- a C compiler rejects any difference in the
types -- and (2) asserts the value of every constant and predefined handle.
Compile it with -Werror: success means the two headers agree.
MPICH-only extensions (MPIX_*) are skipped."""
import re
import sys

ref, out, ours = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(ref).read()
# Presence: a redeclaration alone would not notice a function we lack.
def names(t):
    return set(n for n in re.findall(r'\b(P?MPI_\w+)\(', t) if 'MPIX' not in n)
# The standard's header is the strict one: without the MPI-1 functions MPI
# 3.0 removed, which ours declares unless LMPI_NO_REMOVED_FUNCTIONS is defined.
strict = re.sub(r'#if !defined\(LMPI_NO_REMOVED_FUNCTIONS\).*?#endif', '', open(ours).read(), flags=re.S)
missing = sorted(names(text) - names(strict))
# MPI_<handle>_f2c/c2f (MPI 5.0 §19.3.4) and the status conversions
# MPI_Status_f2c/c2f/f082c/c2f08/f2f08/f082f (§19.3.5) are C functions of
# the standard that the ABI header leaves out (it has _toint/_fromint and no
# Fortran types); ours keeps them.
extra = sorted(n for n in names(strict) - names(text) if not re.search(r'_(f2c|c2f|f082c|c2f08|f2f08|f082f)$', n))
if missing or extra:
    print('missing from our mpi.h: %s' % ' '.join(missing))
    print('not in the reference: %s' % ' '.join(extra))
    sys.exit(1)
lines = ['#include <mpi.h>', '#include <stdint.h>', '#include <stddef.h>']
nproto = nconst = 0
for line in text.splitlines():
    s = line.strip()
    m = re.match(r'^[A-Za-z_][\w \*]*\b(P?MPI_\w+)\(.*\);', s)
    if m and 'MPIX' not in s:
        lines.append(re.sub(r'\s*/\*.*\*/', '', s))
        nproto += 1
        continue
    m = re.match(r'#define (MPI_\w+)\s+\(\((MPI_\w+)\)(0x[0-9a-fA-F]+|[0-9]+)\)', s)
    if m:
        lines.append('_Static_assert((intptr_t)%s == %s, "%s");' % (m.group(1), m.group(3), m.group(1)))
        nconst += 1
        continue
    m = re.match(r'#define (MPI_\w+)\s+(-?[0-9]+)\b', s)
    if m:
        lines.append('_Static_assert(%s == %s, "%s");' % (m.group(1), m.group(2), m.group(1)))
        nconst += 1
        continue
    m = re.match(r'#define (MPI_\w+)\s+\(\(([\w\*]+)\)(-?[0-9a-fx]+)\)', s)
    if m:
        lines.append('_Static_assert((intptr_t)%s == (intptr_t)((%s)%s), "%s");' %
                     (m.group(1), m.group(2), m.group(3), m.group(1)))
        nconst += 1
        continue
    m = re.match(r'(MPI_\w+)\s*=\s*(-?[0-9a-fA-Fx]+),?', s)
    if m:
        lines.append('_Static_assert(%s == %s, "%s");' % (m.group(1), m.group(2), m.group(1)))
        nconst += 1
lines.append('_Static_assert(sizeof(MPI_Status) == 8 * sizeof(int), "status size");')
lines.append('_Static_assert(offsetof(MPI_Status, MPI_SOURCE) == 0, "MPI_SOURCE");')
lines.append('_Static_assert(offsetof(MPI_Status, MPI_TAG) == sizeof(int), "MPI_TAG");')
lines.append('_Static_assert(offsetof(MPI_Status, MPI_ERROR) == 2 * sizeof(int), "MPI_ERROR");')
lines.append('int main(void) { return 0; }')
open(out, 'w').write('\n'.join(lines) + '\n')
print('%d prototypes and %d constants compared' % (nproto, nconst))
