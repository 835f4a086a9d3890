/* MPI_Status accessors (MPI 5.0 §3.2.5): the public fields by function, for
 * languages and tools that do not see the struct (mpi4py builds its
 * MPI.Status with them), and the setters generalized requests use. */
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
