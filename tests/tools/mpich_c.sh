#!/bin/sh
# MPICH's own C test suite (test/mpi of MPICH 4.0.2, from Debian's source
# archive), built unchanged with our mpicc and run by its own runtests
# script under our mpiexec (each test at the process count its list asks
# for, up to 10, on 2 cores: more ranks than cores): the directories below, several
# hundred self-checking programs ("No Errors").  It found, the first time
# it ran (session 59), two communicators created at once sharing a
# context id, a connect/accept deadlock between threads, a dup that left
# its handle untouched on failure and MPI_LB refused by
# MPI_Type_create_struct, then accumulate_ops enforced as a rule and a
# non-NULL base for an empty shared segment; io, spawn and errors (session
# 60): views whose typemaps ran backwards, errors of handle-less calls
# raised past MPI_COMM_WORLD's handler, hangs on mismatched bcast counts,
# aliased collective buffers let through; ft (session 61): blocking probes
# that waited forever for a failed process, and the class of a blocking
# wildcard receive after a failure.
#
#   tests/tools/mpich_c.sh [BUILD_DIR] [DIR...]
#
# Fails on any failure not in EXPECTED below (each with its reason); 77
# (CTest: skipped) when the source cannot be fetched.
set -u
b=$(cd "${1:-build}" && pwd)
[ $# -gt 0 ] && shift
skip() { echo "mpich_c.sh: $1: skipped"; exit 77; }

# Tests that fail by design or for reasons outside LeanMPI: name, then why.
EXPECTED='
keyval_double_free frees a key three times (its delete callback once, then twice): erroneous, a key no longer extant; MPI_ERR_KEYVAL here, MPICH ignores the later frees
keyval_double_free_comm the same with MPI_Comm_free_keyval
keyval_double_free_type the same with MPI_Type_free_keyval
keyval_double_free_win the same with MPI_Win_free_keyval
ic2 needs 33 processes; the suite runs with at most 10
comm_info checks that MPI_Comm_get_info drops unknown keys, MPICH behaviour its own comment says the standard does not require
adderr calls MPIX_Delete_error_class/code/string, MPICH 4.0 names of MPI 4.1 MPI_Remove_error_class/code/string: does not link outside MPICH 4.0
qmpi_test MPICH tool interface (QMPI), not MPI
nonblocking_pready sends and receives with MPI_DATATYPE_NULL (count 0): not a datatype (Open MPI refuses it too)
cartsuball expects MPI_COMM_NULL on all but rank 0 from MPI_Cart_sub keeping no dimension; MPI 4.1 8.5.7 gives each process a zero-dimensional communicator
dims5 expects MPICH factors for 590520 in 4 dimensions (38x37x21x20); ours (37x30x28x19, as Open MPI) have the smaller spread
pack_external switches on MPI_Datatype handles: does not compile where handles are pointers (the standard ABI; Open MPI neither)
typename expects the name MPI_LONG_LONG_INT; in the standard ABI that is the handle of MPI_LONG_LONG, whose name is returned
mt_improbe_isendrecv compares an MPI_Message with MPI_REQUEST_NULL, equal only in MPICH own ABI (passes compared with MPI_MESSAGE_NULL)
mt_improbe_sendrecv the same
mt_improbe_sendrecv_huge the same
nonblocking2 keeps MPI_Datatype handles in an int array for MPI_Ialltoallw: works only where handles are ints (MPICH own ABI)
nonblocking3 the same
oplxor MPI_LXOR on float, double and long double: an MPICH extension (MPI defines the logical operations on integer and logical types)
comm_create_nullarg dups MPI_COMM_WORLD before it sets MPI_ERRORS_RETURN there, then expects an error returned on the dup, which keeps the fatal handler it was made with (MPI 5.0 9.3; Open MPI 5.0.11 aborts as well)
comm_create_group_nullarg the same
comm_split_nullarg the same
comm_split_type_nullarg the same
keyvalmis sets MPI_ERRORS_RETURN on MPI_COMM_WORLD only, then expects MPI_Win_set_attr to return an error: the errors of a window go to its own handler, MPI_ERRORS_ARE_FATAL by default (MPI 5.0 9.3)
too_many_comms expects MPI_Comm_dup to run out of context ids before 200000 communicators (MPICH has 2^14-2^16; ours last for 2^29): the test fails when nothing fails
too_many_comms2 the same with MPI_Comm_create
too_many_comms3 the same with MPI_Comm_split
too_many_icomms the same with MPI_Intercomm_create
too_many_icomms2 the same with MPI_Intercomm_merge
truncmsg2 sends 3 chars into a receive of 4 ints and expects an error: the type signatures are not compared (MPI does not require it); the 3 bytes arrive, MPI_Get_count gives MPI_UNDEFINED
ft/bcast ends with MTest_Finalize, an MPI_Reduce over MPI_COMM_WORLD after rank 1 died: it fails (MPIX_ERR_PROC_FAILED) and the count of errors it prints is garbage; MPICH marks it xfail (its ticket 2237)
ft/agree the same
ft/revoke_shrink checks the sum of an MPI_Allreduce that returned MPIX_ERR_PROC_FAILED (rank 1 died before it), which is undefined; MPICH marks it xfail (its ticket 2198)
win_info expects MPI_Win_get_info to echo the accumulate_ordering, same_size and alloc_shared_noncontig it was given; it reports what the window does (full ordering, the sizes as they are, the layout as allocated), which MPI 4.1 12.2.7 allows
'

# Tests that cannot pass here and would wait for their 180 s timeout:
# name, then why.
SKIP='
noalias calls a collective again at the ranks where it failed its argument checks, as MPICH allows; here a collective that fails at some members counts as called there (src/coll/README.md, call numbers), so the others can go on, and the extra call waits forever
nb_noalias the same with nonblocking collectives
noalias2 calls rooted collectives at rank 0 only, expecting them to fail their checks before counting; the same conflict
'

# errors/spawn/connect_timeout_* set MPICH's connect timeout to 20 s in their
# testlist; ours has its own name (a connect nobody accepts fails with
# MPI_ERR_PORT after it)
export LMPI_DPM_CONNECT_TIMEOUT=5

. "$(dirname "$0")/mpich_suite.sh"
dirs="${*:-attr coll comm datatype errhan errors ft group info init io mpi_t part pt2pt rma spawn topo threads}"
# Up to 10 ranks: many tests ask for 5 to 10 (sizes that are not powers of
# two, where collective algorithms have their edge cases); at most 4 would
# run them with 4.  (About 45 s more than with 4, mostly threads/.)
MPICH_NP=10
# ft: the fault-tolerance tests, run as their testlist says (Hydra's
# -disable-auto-cleanup, which our mpiexec takes; shrink needs 8 ranks).
# Their error-class checks are compiled only for MPICH (#if defined(MPICH)
# && MPICH_NUMVERSION >= 3.1.1): turned on here.  Their xfail marks are
# MPICH's own tickets, which runtests would skip: dropped, and the tests
# that fail here for the same reasons are in EXPECTED.
case " $dirs " in
*" ft "*)
    sed -i 's/ xfail=[^ ]*//' "$dir/ft/testlist"
    if [ ! -f "$dir/ft/.class-checks" ]; then
        make -C "$dir/ft" clean >/dev/null 2>&1
        make -k -j2 -C "$dir/ft" CFLAGS="-O0 -DMPICH=1 -DMPICH_NUMVERSION=30101300" >>"$src/make.log" 2>&1
        touch "$dir/ft/.class-checks"
    fi
    ;;
esac
run_suite C $dirs
exit $fail
