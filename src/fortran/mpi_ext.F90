! The modules Open MPI's users write for its extensions (`use mpi_ext`
! beside `use mpi`, `use mpi_f08_ext` beside `use mpi_f08`; Open MPI's
! manual pages also spell the latter mpi_ext_f08): LeanMPI's extension is
! User-Level Failure Mitigation (src/ft), whose procedures and error
! classes are in `mpi` and `mpi_f08` already, as MPICH has them.  These
! modules name the same entities, so a program may use both modules.
module mpi_ext
  include 'mpi_ext_use.fh'
  implicit none
end module mpi_ext

module mpi_f08_ext
  include 'mpi_f08_ext_use.fh'
  implicit none
end module mpi_f08_ext

module mpi_ext_f08
  use mpi_f08_ext
  implicit none
end module mpi_ext_f08
