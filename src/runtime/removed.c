/* The MPI-1 functions that MPI 3.0 removed, for old programs that still call
 * them (as MPICH keeps them): each is its MPI-2 replacement under the old
 * name.  The MPI_LB and MPI_UB markers, which set a struct type's bounds,
 * are understood by MPI_Type_create_struct (src/datatype/type.c), so by
 * MPI_Type_struct too. */
#include "binding/gen/impl.h"
#include "datatype/datatype.h"
#include "runtime/errhandler.h"

lmpi_status lmpi_impl_Address(void *location, MPI_Aint *address)
{
    return lmpi_impl_Get_address(location, address);
}

lmpi_status lmpi_impl_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler)
{
    return lmpi_impl_Comm_create_errhandler(function, errhandler);
}

lmpi_status lmpi_impl_Errhandler_get(lmpi_comm *comm, MPI_Errhandler *errhandler)
{
    return lmpi_impl_Comm_get_errhandler(comm, errhandler);
}

lmpi_status lmpi_impl_Errhandler_set(lmpi_comm *comm, MPI_Errhandler errhandler)
{
    return lmpi_impl_Comm_set_errhandler(comm, errhandler);
}

lmpi_status lmpi_impl_Type_extent(lmpi_datatype *datatype, MPI_Aint *extent)
{
    MPI_Count lb, ext;
    LMPI_TRY(lmpi_impl_Type_get_extent(datatype, &lb, &ext));
    *extent = (MPI_Aint)ext;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Type_lb(lmpi_datatype *datatype, MPI_Aint *displacement)
{
    MPI_Count lb, ext;
    LMPI_TRY(lmpi_impl_Type_get_extent(datatype, &lb, &ext));
    *displacement = (MPI_Aint)lb;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Type_ub(lmpi_datatype *datatype, MPI_Aint *displacement)
{
    MPI_Count lb, ext;
    LMPI_TRY(lmpi_impl_Type_get_extent(datatype, &lb, &ext));
    *displacement = (MPI_Aint)(lb + ext);
    return LMPI_OK;
}

lmpi_status lmpi_impl_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                                    lmpi_datatype *oldtype, MPI_Datatype *newtype)
{
    return lmpi_impl_Type_create_hindexed(count, (lmpi_iarray){array_of_blocklengths, 4},
                                          (lmpi_iarray){array_of_displacements, 8}, oldtype, newtype);
}

lmpi_status lmpi_impl_Type_hvector(int count, int blocklength, MPI_Aint stride, lmpi_datatype *oldtype,
                                   MPI_Datatype *newtype)
{
    return lmpi_impl_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}

lmpi_status lmpi_impl_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                                  MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    if (count > 0 && (!array_of_blocklengths || !array_of_displacements || !array_of_types)) {
        lmpi_err_detail("an array argument is NULL");
        return LMPI_ERR_ARG;
    }
    return lmpi_impl_Type_create_struct(count, (lmpi_iarray){array_of_blocklengths, 4},
                                        (lmpi_iarray){array_of_displacements, 8}, array_of_types, newtype);
}
