# Fortran (src/fortran/README.md): mpif.h, the `mpi` module and the library
# of Fortran procedures over the standard C ABI, with the mpifort wrapper.
# Built where a Fortran compiler is found; elsewhere the rest builds and the
# Fortran tests say they were skipped.
if(LMPI_UNIT_ONLY)
  set(LMPI_FORTRAN OFF) # the unit-test builds (sanitizers, clang) test C modules only
  return()
endif()
include(CheckLanguage)
check_language(Fortran)
if(NOT CMAKE_Fortran_COMPILER)
  message(STATUS "no Fortran compiler: mpif.h, the mpi module and mpifort are skipped (apt-get install gfortran)")
  set(LMPI_FORTRAN OFF)
  return()
endif()
enable_language(Fortran)
set(LMPI_FORTRAN ON)

configure_file(${CMAKE_SOURCE_DIR}/include/fortran/mpif.h ${CMAKE_BINARY_DIR}/include/mpif.h COPYONLY)
configure_file(${CMAKE_SOURCE_DIR}/include/fortran/mpif-ext.h ${CMAKE_BINARY_DIR}/include/mpif-ext.h COPYONLY)
add_library(mpifort_abi SHARED
  src/fortran/gen/mpif_procs.c
  src/fortran/gen/mpif08_procs.c
  src/fortran/mpif_subarray.c
  src/fortran/mpif_section.c
  src/fortran/mpif_util.c
  src/fortran/mpif_special.c
  src/fortran/mpif_callbacks.c
  src/fortran/mpif_keyval.c
  src/fortran/mpif_attrcell.c
  src/fortran/mpif_removed.c
  src/fortran/mpi.F90
  src/fortran/mpi_f08.F90
  src/fortran/mpi_ext.F90)
# $ORIGIN: an installed libmpifort_abi finds the libmpi_abi beside it (a
# program's own run path does not reach its libraries' dependencies);
# LD_LIBRARY_PATH still swaps in another implementation's.
set_target_properties(mpifort_abi PROPERTIES VERSION 1.0.0 SOVERSION 1
  Fortran_MODULE_DIRECTORY ${CMAKE_BINARY_DIR}/include INSTALL_RPATH "\$ORIGIN")
# ISO_Fortran_binding.h (mpi_f08's array sections) comes with the Fortran
# compiler: asked for its directory, so a C compiler of another make finds it
execute_process(COMMAND ${CMAKE_Fortran_COMPILER} -print-file-name=include
  OUTPUT_VARIABLE LMPI_FORTRAN_INCLUDE OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
target_include_directories(mpifort_abi PRIVATE ${CMAKE_BINARY_DIR}/include ${CMAKE_SOURCE_DIR}/src
  ${CMAKE_SOURCE_DIR}/src/fortran/gen)
if(EXISTS "${LMPI_FORTRAN_INCLUDE}/ISO_Fortran_binding.h")
  target_include_directories(mpifort_abi SYSTEM PRIVATE ${LMPI_FORTRAN_INCLUDE})
endif()
# the module's MPI_SIZEOF specifics are one preprocessed line each
set_source_files_properties(src/fortran/mpi.F90 src/fortran/mpi_f08.F90 PROPERTIES COMPILE_OPTIONS "-ffree-line-length-none")
target_link_libraries(mpifort_abi PRIVATE mpi_abi pthread)

foreach(w mpifort mpif90 mpif77)
  configure_file(tools/wrappers/mpifort ${CMAKE_BINARY_DIR}/bin/${w} COPYONLY)
endforeach()

# the showcase's Fortran part (make demo), built as a user's program would be
add_executable(fortran_sections examples/fortran_sections.f90)
target_link_libraries(fortran_sections PRIVATE mpifort_abi mpi_abi)
target_include_directories(fortran_sections PRIVATE ${CMAKE_BINARY_DIR}/include)
set_target_properties(fortran_sections PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/examples
  Fortran_MODULE_DIRECTORY ${CMAKE_BINARY_DIR}/examples/modules)
