/* The MPI 5.0 pieces that need no runtime: status accessors, Alloc_mem's
 * alignment and accounting, the ABI queries, error class removal, the
 * progress lists that started operations sit in, generalized requests. */
#include <stdint.h>
#include <string.h>

#include "binding/gen/impl.h"
#include "datatype/datatype.h"
#include "pt2pt/pt2pt.h"
#include "runtime/info.h"
#include "unit.h"

static int advanced;
static bool finish_second(lmpi_progress_item *it)
{
    advanced++;
    return advanced >= 2 && it != NULL;
}

static int query_calls, free_calls;
static int q(void *extra, MPI_Status *s)
{
    (void)extra;
    query_calls++;
    s->MPI_TAG = 11;
    return MPI_SUCCESS;
}
static int f(void *extra)
{
    (void)extra;
    free_calls++;
    return MPI_ERR_BUFFER;
}
static int c(void *extra, int complete)
{
    (void)extra, (void)complete;
    return MPI_SUCCESS;
}

int main(void)
{
    lmpi_datatype_init_builtin();
    MPI_Status st;
    int v;
    lmpi_impl_Status_set_source(&st, 5);
    lmpi_impl_Status_set_tag(&st, MPI_ANY_TAG);
    lmpi_impl_Status_set_error(&st, MPI_ERR_TRUNCATE);
    lmpi_impl_Status_get_source(&st, &v);
    CHECK_EQ(v, 5);
    lmpi_impl_Status_get_tag(&st, &v);
    CHECK_EQ(v, MPI_ANY_TAG);
    lmpi_impl_Status_get_error(&st, &v);
    CHECK_EQ(v, MPI_ERR_TRUNCATE);
    lmpi_impl_Status_set_elements(&st, lmpi_datatype_from_handle(MPI_DOUBLE), 3);
    CHECK_EQ(lmpi_status_bytes(&st), 24);
    lmpi_impl_Status_set_cancelled(&st, 7);
    CHECK_EQ(lmpi_status_cancelled(&st), 1);
    CHECK_EQ(lmpi_impl_Status_set_tag(MPI_STATUS_IGNORE, 1), LMPI_ERR_ARG);

    /* Alloc_mem: aligned as asked, counted, given back */
    lmpi_info *info = lmpi_info_new();
    lmpi_info_put(info, "mpi_minimum_memory_alignment", "8192");
    int64_t before = lmpi_mem_current(LMPI_MEM_OTHER);
    void *p = NULL;
    CHECK_EQ(lmpi_impl_Alloc_mem(1000, (MPI_Info)info, &p), LMPI_OK);
    CHECK(p && (uintptr_t)p % 8192 == 0);
    CHECK_EQ(lmpi_mem_current(LMPI_MEM_OTHER), before + 1000);
    memset(p, 1, 1000);
    CHECK_EQ(lmpi_impl_Free_mem(p), LMPI_OK);
    CHECK_EQ(lmpi_mem_current(LMPI_MEM_OTHER), before);
    lmpi_info_put(info, "mpi_minimum_memory_alignment", "100");
    CHECK_EQ(lmpi_impl_Alloc_mem(8, (MPI_Info)info, &p), LMPI_ERR_INFO_VALUE);
    CHECK_EQ(lmpi_impl_Alloc_mem(-1, MPI_INFO_NULL, &p), LMPI_ERR_ARG);
    lmpi_info_destroy(info);

    /* ABI */
    MPI_Info ai;
    CHECK_EQ(lmpi_impl_Abi_get_info(&ai), LMPI_OK);
    const char *aint = lmpi_info_value((lmpi_info *)ai, "mpi_aint_size");
    CHECK(aint && atoi(aint) == (int)sizeof(MPI_Aint));
    lmpi_info_destroy((lmpi_info *)ai);
    CHECK_EQ(lmpi_impl_Abi_get_fortran_info(&ai), LMPI_OK);
    CHECK(ai == MPI_INFO_NULL);
    short t = 1, fl = 0, gt = 9, gf = 9;
    int set = 1;
    CHECK_EQ(lmpi_impl_Abi_get_fortran_booleans(3, &gt, &gf, &set), LMPI_ERR_ARG);
    lmpi_impl_Abi_set_fortran_booleans(2, &t, &fl);
    lmpi_impl_Abi_get_fortran_booleans(2, &gt, &gf, &set);
    CHECK(set && gt == 1 && gf == 0);

    /* error classes go after their codes and strings */
    int cls, code, c2;
    lmpi_impl_Add_error_class(&cls);
    lmpi_impl_Add_error_code(cls, &code);
    CHECK_EQ(lmpi_impl_Remove_error_class(cls), LMPI_ERR_ARG);
    CHECK_EQ(lmpi_impl_Remove_error_code(code), LMPI_OK);
    CHECK_EQ(lmpi_impl_Remove_error_class(cls), LMPI_OK);
    CHECK_EQ(lmpi_impl_Error_class(code, &c2), LMPI_ERR_ARG);
    CHECK_EQ(lmpi_status_class(lmpi_status_from_code(MPI_ERR_TAG)), MPI_ERR_TAG);

    /* progress lists: an item is advanced by every poll until it finishes */
    lmpi_progress_item it = {0};
    lmpi_progress_lists[LMPI_PROGRESS_PART].advance = finish_second;
    lmpi_progress_list_add(LMPI_PROGRESS_PART, &it);
    CHECK(lmpi_progress_lists_on != 0);
    lmpi_progress_list_remove(LMPI_PROGRESS_PART, &it);
    CHECK_EQ(lmpi_progress_lists_on, 0);

    /* generalized requests: query fills the status, free's error is the result */
    MPI_Request g;
    CHECK_EQ(lmpi_impl_Grequest_start(q, f, c, NULL, &g), LMPI_OK);
    lmpi_request *r = lmpi_request_from_handle(g);
    CHECK(r && !lmpi_request_done(r));
    CHECK_EQ(lmpi_impl_Grequest_complete(g), LMPI_OK);
    CHECK(lmpi_request_done(r));
    CHECK_EQ(lmpi_greq_query(r, &st), LMPI_OK);
    CHECK_EQ(st.MPI_TAG, 11);
    CHECK_EQ(lmpi_status_class(lmpi_greq_release(r)), MPI_ERR_BUFFER);
    CHECK_EQ(free_calls, 1);
    CHECK_EQ(lmpi_impl_Grequest_complete(g), LMPI_ERR_REQUEST); /* gone */
    return unit_finish("test_mpi5");
}
