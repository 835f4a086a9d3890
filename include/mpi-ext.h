/* mpi-ext.h: LeanMPI's extensions, for programs that include it the way
 * Open MPI's users do.  Everything is in mpi.h already: the fault-tolerance
 * calls (MPIX_Comm_revoke, _shrink, _agree, ...; src/ft/README.md) and
 * their error classes, MPIX_ERR_PROC_FAILED among them, which is the macro
 * to test for them. */
#ifndef MPI_EXT_H_INCLUDED
#define MPI_EXT_H_INCLUDED
#include <mpi.h>
#endif
