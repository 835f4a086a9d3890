/* Status -> class translation, error strings, user classes and codes. */
#include <string.h>

#include "binding/gen/impl.h"
#include "runtime/errhandler.h"
#include "runtime/config.h"
#include "unit.h"

int main(void)
{
    CHECK_EQ(lmpi_status_class(LMPI_OK), MPI_SUCCESS);
    CHECK_EQ(lmpi_status_class(LMPI_ERR_RANK), MPI_ERR_RANK);
    CHECK_EQ(lmpi_status_class(LMPI_ERR_TRUNCATE), MPI_ERR_TRUNCATE);
    CHECK_EQ(lmpi_status_class(LMPI_ERR_UNSUPPORTED_OPERATION), MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK_EQ(lmpi_status_class(LMPI_ERR_ABI), MPI_ERR_ABI);
    CHECK_EQ(lmpi_status_class((lmpi_status)9999), MPI_ERR_INTERN);
    /* every class 0..MPI_ERR_ABI is reachable from exactly one status */
    int seen[MPI_ERR_ABI + 1] = {0};
    for (int s = 0; s < LMPI_STATUS_COUNT; s++) {
        int c = lmpi_status_class((lmpi_status)s);
        if (c <= MPI_ERR_ABI)
            seen[c]++;
        else
            CHECK((c >= MPI_T_ERR_CANNOT_INIT && c <= MPI_T_ERR_PVAR_NO_ATOMIC) || /* the MPI_T codes */
                  (c >= MPIX_ERR_PROC_FAILED && c <= MPIX_ERR_REVOKED));          /* fault tolerance's */
    }
    for (int c = 0; c <= MPI_ERR_ABI; c++)
        CHECK_EQ(seen[c], 1);

    char buf[MPI_MAX_ERROR_STRING];
    int len, cls;
    CHECK_EQ(lmpi_impl_Error_string(MPI_ERR_TAG, buf, &len), LMPI_OK);
    CHECK(strstr(buf, "MPI_ERR_TAG: invalid tag") != NULL);
    CHECK_EQ(lmpi_impl_Error_string(-3, buf, &len), LMPI_ERR_ARG);
    CHECK_EQ(lmpi_impl_Error_class(MPI_ERR_COMM, &cls), LMPI_OK);
    CHECK_EQ(cls, MPI_ERR_COMM);

    int c1, c2, code;
    CHECK_EQ(lmpi_impl_Add_error_class(&c1), LMPI_OK);
    CHECK_EQ(lmpi_impl_Add_error_class(&c2), LMPI_OK);
    CHECK(c1 > MPI_ERR_LASTCODE && c2 == c1 + 1);
    CHECK_EQ(lmpi_impl_Add_error_code(c2, &code), LMPI_OK);
    CHECK_EQ(lmpi_impl_Error_class(code, &cls), LMPI_OK);
    CHECK_EQ(cls, c2);
    CHECK_EQ(lmpi_impl_Add_error_code(code, &cls), LMPI_ERR_ARG); /* a code is not a class */
    CHECK_EQ(lmpi_impl_Add_error_string(code, "disk on fire"), LMPI_OK);
    CHECK_EQ(lmpi_impl_Error_string(code, buf, &len), LMPI_OK);
    CHECK(strcmp(buf, "disk on fire") == 0);
    CHECK_EQ(lmpi_impl_Add_error_string(MPI_ERR_RANK, "no"), LMPI_ERR_ARG); /* predefined */

    /* the initial handler follows LMPI_INITIAL_ERRHANDLER */
    setenv("LMPI_INITIAL_ERRHANDLER", "return", 1);
    lmpi_config_load();
    CHECK(lmpi_errhandler_initial()->kind == LMPI_ERRH_RETURN);
    setenv("LMPI_INITIAL_ERRHANDLER", "fatal", 1);
    lmpi_config_load();
    CHECK(lmpi_errhandler_initial()->kind == LMPI_ERRH_FATAL);
    lmpi_errors_finalize();
    return unit_finish("test_errors");
}
