/* MPI_Status accessors (MPI 5.0 §3.2.5): the public fields by function, for
 * languages and tools that do not see the struct (mpi4py builds its
 * MPI.Status with them), and the setters generalized requests use. */
#include <stdbool.h>
#include <string.h>

#include "binding/gen/impl.h"
#include "datatype/datatype.h"
#include "pt2pt/pt2pt.h"

/* MPI_STATUS_IGNORE is NULL in the standard ABI: nothing to read or write. */
#define NEED_STATUS(s)                                                 \
    do {                                                               \
        if (!(s)) {                                                    \
            lmpi_err_detail("status is NULL or MPI_STATUS_IGNORE");    \
            return LMPI_ERR_ARG;                                       \
        }                                                              \
    } while (0)

lmpi_status lmpi_impl_Status_get_source(const MPI_Status *status, int *source)
{
    NEED_STATUS(status);
    *source = status->MPI_SOURCE;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Status_get_tag(const MPI_Status *status, int *tag)
{
    NEED_STATUS(status);
    *tag = status->MPI_TAG;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Status_get_error(const MPI_Status *status, int *error)
{
    NEED_STATUS(status);
    *error = status->MPI_ERROR;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Status_set_source(MPI_Status *status, int source)
{
    NEED_STATUS(status);
    status->MPI_SOURCE = source;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Status_set_tag(MPI_Status *status, int tag)
{
    NEED_STATUS(status);
    status->MPI_TAG = tag;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Status_set_error(MPI_Status *status, int error)
{
    NEED_STATUS(status);
    status->MPI_ERROR = error;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Status_set_cancelled(MPI_Status *status, int flag)
{
    NEED_STATUS(status);
    lmpi_status_set_cancelled(status, flag != 0);
    return LMPI_OK;
}

/* count basic elements of datatype: the bytes they take (what MPI_Get_count
 * and MPI_Get_elements read back). */
lmpi_status lmpi_impl_Status_set_elements(MPI_Status *status, lmpi_datatype *datatype, MPI_Count count)
{
    NEED_STATUS(status);
    if (count < 0) {
        lmpi_err_detail("count %lld is negative", (long long)count);
        return LMPI_ERR_COUNT;
    }
    lmpi_status_set_bytes(status, (int64_t)lmpi_dt_elements_bytes(datatype, count));
    return LMPI_OK;
}

lmpi_status lmpi_impl_Status_set_elements_x(MPI_Status *status, lmpi_datatype *datatype, MPI_Count count)
{
    return lmpi_impl_Status_set_elements(status, datatype, count);
}

/* The Fortran forms of a status (MPI 5.0 §19.3.5).  In the standard ABI an
 * INTEGER status, mpi_f08's TYPE(MPI_Status) and the C status are the same
 * 8 integers, so each conversion is a copy; the ignore sentinels are not
 * statuses (the standard calls passing them erroneous: an error here).  The
 * sentinels' addresses are the Fortran library's when it is loaded (it sets
 * these pointers: src/fortran/mpif_util.c); until then, storage of ours. */
static MPI_Fint f_ignore[MPI_F_STATUS_SIZE], f_ignores[MPI_F_STATUS_SIZE];
static MPI_F08_status f08_ignore, f08_ignores;
MPI_Fint *MPI_F_STATUS_IGNORE = f_ignore;
MPI_Fint *MPI_F_STATUSES_IGNORE = f_ignores;
MPI_F08_status *MPI_F08_STATUS_IGNORE = &f08_ignore;
MPI_F08_status *MPI_F08_STATUSES_IGNORE = &f08_ignores;

_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status) && sizeof(MPI_Fint) == sizeof(int),
               "the three forms of a status are the same 8 integers");

static bool is_ignore(const void *s)
{
    return !s || s == MPI_F_STATUS_IGNORE || s == MPI_F_STATUSES_IGNORE || s == MPI_F08_STATUS_IGNORE ||
           s == MPI_F08_STATUSES_IGNORE;
}

static lmpi_status copy_status(const void *in, const char *in_name, void *out, const char *out_name)
{
    if (is_ignore(in) || is_ignore(out)) {
        lmpi_err_detail("%s is %s", is_ignore(in) ? in_name : out_name,
                        !(is_ignore(in) ? in : out) ? "NULL or MPI_STATUS_IGNORE" : "a STATUS(ES)_IGNORE sentinel");
        return LMPI_ERR_ARG;
    }
    memcpy(out, in, sizeof(MPI_Status));
    return LMPI_OK;
}

lmpi_status lmpi_impl_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    return copy_status(c_status, "c_status", f_status, "f_status");
}

lmpi_status lmpi_impl_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    return copy_status(f_status, "f_status", c_status, "c_status");
}

lmpi_status lmpi_impl_Status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status)
{
    return copy_status(c_status, "c_status", f08_status, "f08_status");
}

lmpi_status lmpi_impl_Status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status)
{
    return copy_status(f08_status, "f08_status", c_status, "c_status");
}

lmpi_status lmpi_impl_Status_f2f08(const MPI_Fint *f_status, MPI_F08_status *f08_status)
{
    return copy_status(f_status, "f_status", f08_status, "f08_status");
}

lmpi_status lmpi_impl_Status_f082f(const MPI_F08_status *f08_status, MPI_Fint *f_status)
{
    return copy_status(f08_status, "f08_status", f_status, "f_status");
}
