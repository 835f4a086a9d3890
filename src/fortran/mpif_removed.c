/* MPI-1 procedures that MPI-3 removed but Fortran programs still call
 * (the NAS Parallel Benchmarks, many legacy codes), as MPICH and Open MPI
 * keep them: MPI_ADDRESS, MPI_TYPE_EXTENT/LB/UB, MPI_TYPE_HVECTOR,
 * MPI_TYPE_HINDEXED, MPI_TYPE_STRUCT and MPI_ERRHANDLER_CREATE/SET/GET.
 * The MPI 5.0 standard has no binding for them (apis.json neither), so they
 * are written here, over their replacements in the standard ABI: the
 * library stays portable (no call to a function the ABI lacks).  Their
 * addresses and extents are INTEGERs, as MPI-1 had them.  An extent or bound
 * beyond 2^31 fails with MPI_ERR_ARG rather than being cut; MPI_ADDRESS gives
 * the address's low 32 bits, so the differences between nearby variables
 * that MPI-1 programs compute (a struct's displacements) come out right,
 * as with the peers on 64-bit machines; an absolute address for use with
 * MPI_BOTTOM needs MPI_GET_ADDRESS and INTEGER(KIND=MPI_ADDRESS_KIND). */
#include <limits.h>

#include "fortran/mpif_util.h"

static int to_fint(MPI_Aint v, MPI_Fint *out)
{
    if (v > INT_MAX || v < INT_MIN)
        return MPI_ERR_ARG;
    *out = (MPI_Fint)v;
    return MPI_SUCCESS;
}

#define TWIN(ret, name, params, ...)                                                                \
    ret mpi_##name##_ params { name##_body(false, __VA_ARGS__); }                                   \
    ret pmpi_##name##_ params { name##_body(true, __VA_ARGS__); }

static void address_body(bool prof, void *location, MPI_Fint *address, MPI_Fint *ierror)
{
    MPI_Aint a = 0;
    int rc = prof ? PMPI_Get_address(LMPIF_BUF(location), &a) : MPI_Get_address(LMPIF_BUF(location), &a);
    if (rc == MPI_SUCCESS)
        *address = (MPI_Fint)(uint32_t)(uintptr_t)a;
    *ierror = rc;
}
TWIN(void, address, (void *location, MPI_Fint *address, MPI_Fint *ierror), location, address, ierror)

/* 0: extent, 1: lb, 2: ub */
static void bound(bool prof, int which, MPI_Fint *datatype, MPI_Fint *out, MPI_Fint *ierror)
{
    MPI_Aint lb = 0, extent = 0;
    MPI_Datatype t = lmpif_Type_fromint(*datatype);
    int rc = prof ? PMPI_Type_get_extent(t, &lb, &extent) : MPI_Type_get_extent(t, &lb, &extent);
    *ierror = rc == MPI_SUCCESS ? to_fint(which == 0 ? extent : which == 1 ? lb : lb + extent, out) : rc;
}
static void type_extent_body(bool prof, MPI_Fint *datatype, MPI_Fint *extent, MPI_Fint *ierror)
{
    bound(prof, 0, datatype, extent, ierror);
}
static void type_lb_body(bool prof, MPI_Fint *datatype, MPI_Fint *lb, MPI_Fint *ierror)
{
    bound(prof, 1, datatype, lb, ierror);
}
static void type_ub_body(bool prof, MPI_Fint *datatype, MPI_Fint *ub, MPI_Fint *ierror)
{
    bound(prof, 2, datatype, ub, ierror);
}
TWIN(void, type_extent, (MPI_Fint *datatype, MPI_Fint *extent, MPI_Fint *ierror), datatype, extent, ierror)
TWIN(void, type_lb, (MPI_Fint *datatype, MPI_Fint *lb, MPI_Fint *ierror), datatype, lb, ierror)
TWIN(void, type_ub, (MPI_Fint *datatype, MPI_Fint *ub, MPI_Fint *ierror), datatype, ub, ierror)

static void type_hvector_body(bool prof, MPI_Fint *count, MPI_Fint *blocklength, MPI_Fint *stride,
                              MPI_Fint *oldtype, MPI_Fint *newtype, MPI_Fint *ierror)
{
    MPI_Datatype t = MPI_DATATYPE_NULL, old = lmpif_Type_fromint(*oldtype);
    *ierror = prof ? PMPI_Type_create_hvector(*count, *blocklength, *stride, old, &t)
                   : MPI_Type_create_hvector(*count, *blocklength, *stride, old, &t);
    if (*ierror == MPI_SUCCESS)
        *newtype = lmpif_Type_toint(t);
}
TWIN(void, type_hvector,
     (MPI_Fint *count, MPI_Fint *blocklength, MPI_Fint *stride, MPI_Fint *oldtype, MPI_Fint *newtype,
      MPI_Fint *ierror),
     count, blocklength, stride, oldtype, newtype, ierror)

/* INTEGER displacements to MPI_Aint ones; NULL when out of memory */
static MPI_Aint *widen(const MPI_Fint *d, MPI_Fint n)
{
    MPI_Aint *w = malloc(sizeof(MPI_Aint) * (size_t)(n > 0 ? n : 1));
    for (MPI_Fint i = 0; w && i < n; i++)
        w[i] = d[i];
    return w;
}

static void type_hindexed_body(bool prof, MPI_Fint *count, MPI_Fint *blocklengths, MPI_Fint *displacements,
                               MPI_Fint *oldtype, MPI_Fint *newtype, MPI_Fint *ierror)
{
    MPI_Aint *d = widen(displacements, *count);
    if (!d) {
        *ierror = MPI_ERR_NO_MEM;
        return;
    }
    MPI_Datatype t = MPI_DATATYPE_NULL, old = lmpif_Type_fromint(*oldtype);
    *ierror = prof ? PMPI_Type_create_hindexed(*count, blocklengths, d, old, &t)
                   : MPI_Type_create_hindexed(*count, blocklengths, d, old, &t);
    if (*ierror == MPI_SUCCESS)
        *newtype = lmpif_Type_toint(t);
    free(d);
}
TWIN(void, type_hindexed,
     (MPI_Fint *count, MPI_Fint *blocklengths, MPI_Fint *displacements, MPI_Fint *oldtype, MPI_Fint *newtype,
      MPI_Fint *ierror),
     count, blocklengths, displacements, oldtype, newtype, ierror)

static void type_struct_body(bool prof, MPI_Fint *count, MPI_Fint *blocklengths, MPI_Fint *displacements,
                             MPI_Fint *types, MPI_Fint *newtype, MPI_Fint *ierror)
{
    MPI_Aint *d = widen(displacements, *count);
    MPI_Datatype *c = lmpif_handles_in(LMPIF_TYPE, types, *count, true);
    if (!d || !c) {
        free(d);
        lmpif_handles_free(c);
        *ierror = MPI_ERR_NO_MEM;
        return;
    }
    MPI_Datatype t = MPI_DATATYPE_NULL;
    *ierror = prof ? PMPI_Type_create_struct(*count, blocklengths, d, c, &t)
                   : MPI_Type_create_struct(*count, blocklengths, d, c, &t);
    if (*ierror == MPI_SUCCESS)
        *newtype = lmpif_Type_toint(t);
    free(d);
    lmpif_handles_free(c);
}
TWIN(void, type_struct,
     (MPI_Fint *count, MPI_Fint *blocklengths, MPI_Fint *displacements, MPI_Fint *types, MPI_Fint *newtype,
      MPI_Fint *ierror),
     count, blocklengths, displacements, types, newtype, ierror)

/* MPI_ERRHANDLER_CREATE is MPI_COMM_CREATE_ERRHANDLER (mpif_callbacks.c) */
void mpi_comm_create_errhandler_(void (*fn)(MPI_Fint *, MPI_Fint *), MPI_Fint *errhandler, MPI_Fint *ierror);
void pmpi_comm_create_errhandler_(void (*fn)(MPI_Fint *, MPI_Fint *), MPI_Fint *errhandler, MPI_Fint *ierror);

void mpi_errhandler_create_(void (*fn)(MPI_Fint *, MPI_Fint *), MPI_Fint *errhandler, MPI_Fint *ierror)
{
    mpi_comm_create_errhandler_(fn, errhandler, ierror);
}

void pmpi_errhandler_create_(void (*fn)(MPI_Fint *, MPI_Fint *), MPI_Fint *errhandler, MPI_Fint *ierror)
{
    pmpi_comm_create_errhandler_(fn, errhandler, ierror);
}

static void errhandler_set_body(bool prof, MPI_Fint *comm, MPI_Fint *errhandler, MPI_Fint *ierror)
{
    MPI_Comm c = lmpif_Comm_fromint(*comm);
    MPI_Errhandler e = lmpif_Errhandler_fromint(*errhandler);
    *ierror = prof ? PMPI_Comm_set_errhandler(c, e) : MPI_Comm_set_errhandler(c, e);
}
TWIN(void, errhandler_set, (MPI_Fint *comm, MPI_Fint *errhandler, MPI_Fint *ierror), comm, errhandler, ierror)

static void errhandler_get_body(bool prof, MPI_Fint *comm, MPI_Fint *errhandler, MPI_Fint *ierror)
{
    MPI_Errhandler e = MPI_ERRHANDLER_NULL;
    MPI_Comm c = lmpif_Comm_fromint(*comm);
    *ierror = prof ? PMPI_Comm_get_errhandler(c, &e) : MPI_Comm_get_errhandler(c, &e);
    if (*ierror == MPI_SUCCESS)
        *errhandler = lmpif_Errhandler_toint(e);
}
TWIN(void, errhandler_get, (MPI_Fint *comm, MPI_Fint *errhandler, MPI_Fint *ierror), comm, errhandler, ierror)
