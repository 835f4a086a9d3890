/* The generated binding layer: one entry per function and variant, unique
 * names, implemented functions resolved, the rest reported unsupported. */
#include <string.h>

#include "binding/gen/impl.h"
#include "unit.h"

static int lookup(const char *name, int *implemented)
{
    for (const lmpi_function_entry *f = lmpi_functions; f->name; f++)
        if (!strcmp(f->name, name)) {
            *implemented = f->impl != NULL;
            return 1;
        }
    return 0;
}

int main(void)
{
    int n = 0, impl;
    for (const lmpi_function_entry *f = lmpi_functions; f->name; f++) {
        n++;
        for (const lmpi_function_entry *g = f + 1; g->name; g++)
            if (!strcmp(f->name, g->name))
                CHECK(!"duplicate function name");
    }
    CHECK(n > 600); /* MPI 5.0 has more than 600 C functions with the _c variants */
    CHECK(lookup("MPI_Send", &impl) && impl);
    CHECK(lookup("MPI_Send_c", &impl) && impl);
    CHECK(lookup("MPI_Isend", &impl) && impl);
    CHECK(lookup("MPI_Barrier", &impl) && impl);
    CHECK(lookup("MPI_Wtime", &impl) && impl);
    CHECK(lookup("MPI_Comm_dup", &impl) && impl);
    CHECK(lookup("MPI_Comm_spawn", &impl) && impl);
    CHECK(lookup("MPI_Alltoallw_c", &impl) && impl);
    CHECK(lookup("MPI_Neighbor_alltoallw_c", &impl) && impl);
    CHECK(lookup("MPI_File_open", &impl) && impl);
    CHECK(lookup("MPI_Register_datarep_c", &impl) && impl);
    CHECK(!lookup("MPI_Not_a_function", &impl));
    CHECK(strcmp(lmpi_predefined_name((uintptr_t)MPI_COMM_WORLD), "MPI_COMM_WORLD") == 0);
    CHECK(strcmp(lmpi_predefined_name((uintptr_t)MPI_DOUBLE), "MPI_DOUBLE") == 0);
    CHECK(lmpi_predefined_name(0x3ff) == NULL);

    /* The standard ABI's fixed layouts and values. */
    CHECK_EQ(sizeof(MPI_Status), 32);
    CHECK_EQ(sizeof(MPI_Aint), sizeof(void *));
    CHECK_EQ(sizeof(MPI_Count), 8);
    CHECK_EQ(sizeof(MPI_Offset), 8);
    CHECK_EQ((intptr_t)MPI_COMM_WORLD, 0x101);
    CHECK_EQ((intptr_t)MPI_INT, 0x209);
    CHECK_EQ((intptr_t)MPI_REQUEST_NULL, 0x180);
    CHECK_EQ(MPI_ANY_SOURCE, -1);
    CHECK_EQ(MPI_PROC_NULL, -3);
    CHECK_EQ(MPI_THREAD_MULTIPLE, 4096);
    CHECK_EQ(MPI_ERR_LASTCODE, 0x3fff);

    /* iarray: one implementation reads int and MPI_Count arrays alike */
    int small[3] = {1, -2, 3};
    MPI_Count wide[3] = {1, -2, (MPI_Count)1 << 40};
    lmpi_iarray a = {small, 4}, b = {wide, 8};
    CHECK_EQ(lmpi_iarray_get(a, 1), -2);
    CHECK_EQ(lmpi_iarray_get(b, 2), (MPI_Count)1 << 40);
    CHECK_EQ(lmpi_narrow_int((int64_t)1 << 40), MPI_UNDEFINED);
    CHECK_EQ(lmpi_narrow_int(-7), -7);
    return unit_finish("test_binding");
}
