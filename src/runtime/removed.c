/* The MPI-1 functions that MPI 3.0 removed, for old programs that still call
 * them (as MPICH keeps them): each is its MPI-2 replacement under the old
 * name, and MPI_Type_struct also understands the MPI_LB and MPI_UB markers,
 * which set the new type's bounds (MPI-1 §3.12.3).  A marker inside a type
 * that is then used again does not stick to the outer type (MPI-1's
 * "sticky" bounds): the replacement, MPI_Type_create_resized, has none. */
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
    /* the markers leave the list; the lowest MPI_LB and highest MPI_UB
     * displacement become the bounds */
    int *bl = lmpi_malloc(sizeof(int) * (size_t)(count + 1), LMPI_MEM_DATATYPE);
    MPI_Aint *dp = lmpi_malloc(sizeof(MPI_Aint) * (size_t)(count + 1), LMPI_MEM_DATATYPE);
    MPI_Datatype *ty = lmpi_malloc(sizeof(MPI_Datatype) * (size_t)(count + 1), LMPI_MEM_DATATYPE);
    if (!bl || !dp || !ty) {
        lmpi_free(bl), lmpi_free(dp), lmpi_free(ty);
        return LMPI_ERR_NO_MEM;
    }
    int n = 0;
    bool has_lb = false, has_ub = false;
    MPI_Aint lb = 0, ub = 0;
    for (int i = 0; i < count; i++) {
        MPI_Aint d = array_of_displacements[i];
        if (array_of_types[i] == MPI_LB) {
            lb = has_lb && lb < d ? lb : d;
            has_lb = true;
        } else if (array_of_types[i] == MPI_UB) {
            ub = has_ub && ub > d ? ub : d;
            has_ub = true;
        } else {
            bl[n] = array_of_blocklengths[i];
            dp[n] = d;
            ty[n++] = array_of_types[i];
        }
    }
    MPI_Datatype plain;
    lmpi_status st = lmpi_impl_Type_create_struct(n, (lmpi_iarray){bl, 4}, (lmpi_iarray){dp, 8}, ty,
                                                  has_lb || has_ub ? &plain : newtype);
    lmpi_free(bl), lmpi_free(dp), lmpi_free(ty);
    if (st != LMPI_OK || !(has_lb || has_ub))
        return st;
    lmpi_datatype *p = lmpi_datatype_from_handle(plain);
    MPI_Count plb, pext;
    st = lmpi_impl_Type_get_extent(p, &plb, &pext);
    if (st == LMPI_OK) {
        MPI_Aint l = has_lb ? lb : (MPI_Aint)plb, u = has_ub ? ub : (MPI_Aint)(plb + pext);
        st = lmpi_impl_Type_create_resized(p, l, u - l, newtype);
    }
    lmpi_impl_Type_free(&plain);
    return st;
}
