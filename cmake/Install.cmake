# make install PREFIX=...: the build tree's layout plus a pkg-config file.
install(TARGETS mpi_abi LIBRARY DESTINATION lib)
install(CODE "execute_process(COMMAND ${CMAKE_COMMAND} -E create_symlink libmpi_abi.so \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/libmpi.so)")
install(FILES ${CMAKE_BINARY_DIR}/include/mpi.h ${CMAKE_BINARY_DIR}/include/mpi-ext.h DESTINATION include)
install(TARGETS mpiexec leanmpi_info leanmpi-map leanmpi-ftwrap RUNTIME DESTINATION bin)
install(PROGRAMS tools/wrappers/mpicc tools/wrappers/mpicxx tools/wrappers/lmpi-wrapper-common DESTINATION bin)
configure_file(${CMAKE_SOURCE_DIR}/tools/wrappers/leanmpi.pc.in ${CMAKE_BINARY_DIR}/leanmpi.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/leanmpi.pc DESTINATION lib/pkgconfig)
install(CODE "execute_process(COMMAND ${CMAKE_COMMAND} -E create_symlink leanmpi.pc \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/pkgconfig/mpi.pc)")
if(LMPI_FORTRAN)
  install(TARGETS mpifort_abi LIBRARY DESTINATION lib)
  install(FILES ${CMAKE_BINARY_DIR}/include/mpif.h ${CMAKE_BINARY_DIR}/include/mpi.mod
    ${CMAKE_BINARY_DIR}/include/mpi_f08.mod ${CMAKE_BINARY_DIR}/include/mpif-ext.h
    ${CMAKE_BINARY_DIR}/include/mpi_ext.mod ${CMAKE_BINARY_DIR}/include/mpi_f08_ext.mod
    ${CMAKE_BINARY_DIR}/include/mpi_ext_f08.mod DESTINATION include)
  install(PROGRAMS tools/wrappers/mpifort DESTINATION bin)
  configure_file(${CMAKE_SOURCE_DIR}/tools/wrappers/mpi-fort.pc.in ${CMAKE_BINARY_DIR}/mpi-fort.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/mpi-fort.pc DESTINATION lib/pkgconfig)
  install(CODE "foreach(w mpif90 mpif77)
    execute_process(COMMAND ${CMAKE_COMMAND} -E create_symlink mpifort \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/bin/\${w})
  endforeach()")
endif()
