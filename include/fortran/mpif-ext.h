!     mpif-ext.h: LeanMPI's extensions for programs that include it the
!     way Open MPI's users do.  Everything is in mpif.h already: the
!     User-Level Failure Mitigation procedures (MPIX_COMM_REVOKE, ...)
!     and their error classes (MPIX_ERR_PROC_FAILED, ...).
