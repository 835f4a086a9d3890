/* MPI-IO without the runtime: the view mapping against a closed formula
 * (random vector filetypes resized to random extents, at random
 * displacements, from random stream positions and run limits), views with
 * empty blocks and without data, view checks, external32 and user
 * representation sizes, datarep registration, and errno -> error classes. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "binding/gen/impl.h"
#include "io/file.h"
#include "unit.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static long rnd(long n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (long)(rng % (uint64_t)n);
}

static lmpi_datatype *D(MPI_Datatype h) { return lmpi_datatype_from_handle(h); }

/* vector(count, blen, stride) of bytes resized to extent E at disp: where
 * stream byte s lands, by the definition */
static MPI_Offset vector_offset(long count, long blen, long stride, long E, MPI_Offset disp, MPI_Count s)
{
    long tile = s / (count * blen), r = s % (count * blen);
    return disp + tile * E + (r / blen) * stride + r % blen;
}

static void test_vector_views(int rounds)
{
    for (int it = 0; it < rounds; it++) {
        long count = 1 + rnd(6), blen = 1 + rnd(9), stride = blen + rnd(12);
        long E = (count - 1) * stride + blen + rnd(20);
        MPI_Offset disp = rnd(1000);
        MPI_Datatype v, t;
        CHECK_EQ(lmpi_impl_Type_vector(count, blen, stride, D(MPI_BYTE), &v), LMPI_OK);
        CHECK_EQ(lmpi_impl_Type_create_resized(D(v), 0, E, &t), LMPI_OK);
        CHECK_EQ(lmpi_impl_Type_commit(&t), LMPI_OK);
        lmpi_view view;
        CHECK_EQ(lmpi_view_build(&view, disp, D(MPI_BYTE), D(t), "native", true), LMPI_OK);
        MPI_Count first = rnd(500), len = 1 + rnd(400);
        int max = 1 + (int)rnd(8);
        MPI_Count s = first;
        int bad = 0;
        while (s < first + len) {
            MPI_Offset off[8];
            MPI_Count rl[8], done;
            int n = lmpi_view_runs(&view, s, first + len - s, off, rl, max, &done);
            CHECK(n > 0 && n <= max);
            if (n <= 0)
                break;
            MPI_Count sum = 0;
            for (int i = 0; i < n; i++) {
                for (MPI_Count k = 0; k < rl[i]; k++)
                    bad += off[i] + k != vector_offset(count, blen, stride, E, disp, s + sum + k);
                /* runs are maximal: the next run does not continue this one */
                if (i + 1 < n)
                    bad += off[i] + rl[i] == off[i + 1];
                sum += rl[i];
            }
            CHECK_EQ(done, sum);
            s += done;
        }
        CHECK_EQ(bad, 0);
        CHECK_EQ(lmpi_view_offset(&view, 7), vector_offset(count, blen, stride, E, disp, 7));
        lmpi_view_clear(&view);
        lmpi_impl_Type_free(&v);
        lmpi_impl_Type_free(&t);
    }
}

static void test_special_views(void)
{
    lmpi_view view;
    /* indexed with zero-length blocks: the empty blocks are skipped */
    MPI_Datatype t;
    int bl[4] = {2, 0, 3, 0}, dp[4] = {1, 4, 6, 9};
    CHECK_EQ(lmpi_impl_Type_indexed(4, (lmpi_iarray){bl, 4}, (lmpi_iarray){dp, 4}, D(MPI_BYTE), &t), LMPI_OK);
    CHECK_EQ(lmpi_impl_Type_commit(&t), LMPI_OK);
    CHECK_EQ(lmpi_view_build(&view, 100, D(MPI_BYTE), D(t), "native", true), LMPI_OK);
    MPI_Offset off[4];
    MPI_Count rl[4], done;
    CHECK_EQ(lmpi_view_runs(&view, 0, 5, off, rl, 4, &done), 2);
    CHECK_EQ(off[0], 101);
    CHECK_EQ(rl[0], 2);
    CHECK_EQ(off[1], 106);
    CHECK_EQ(rl[1], 3);
    CHECK_EQ(done, 5);
    lmpi_view_clear(&view);
    lmpi_impl_Type_free(&t);
    /* a filetype without data: legal, no runs, no bytes may go through it */
    int zbl[2] = {0, 0};
    CHECK_EQ(lmpi_impl_Type_indexed(2, (lmpi_iarray){zbl, 4}, (lmpi_iarray){dp, 4}, D(MPI_BYTE), &t), LMPI_OK);
    CHECK_EQ(lmpi_impl_Type_commit(&t), LMPI_OK);
    CHECK_EQ(lmpi_view_build(&view, 0, D(MPI_BYTE), D(t), "native", true), LMPI_OK);
    CHECK_EQ(lmpi_view_runs(&view, 0, 5, off, rl, 4, &done), 0);
    MPI_Count bytes;
    CHECK_EQ(lmpi_view_stream_bytes(&view, 0, D(MPI_INT), &bytes), LMPI_OK);
    CHECK_EQ(lmpi_view_stream_bytes(&view, 1, D(MPI_INT), &bytes), LMPI_ERR_ARG);
    lmpi_view_clear(&view);
    lmpi_impl_Type_free(&t);
    /* checks: whole etypes, committed types, known representations */
    MPI_Datatype six;
    CHECK_EQ(lmpi_impl_Type_contiguous(6, D(MPI_BYTE), &six), LMPI_OK);
    CHECK_EQ(lmpi_view_build(&view, 0, D(MPI_INT), D(six), "native", true), LMPI_ERR_TYPE); /* not committed */
    CHECK_EQ(lmpi_impl_Type_commit(&six), LMPI_OK);
    CHECK_EQ(lmpi_view_build(&view, 0, D(MPI_INT), D(six), "native", true), LMPI_ERR_TYPE); /* 6 bytes, 4-byte etype */
    CHECK_EQ(lmpi_view_build(&view, 0, D(MPI_BYTE), D(six), "no-such-rep", true), LMPI_ERR_UNSUPPORTED_DATAREP);
    CHECK_EQ(lmpi_view_build(&view, 0, D(MPI_BYTE), D(six), "native", true), LMPI_OK);
    CHECK_EQ(lmpi_view_stream_bytes(&view, 3, D(MPI_INT), &bytes), LMPI_OK);
    CHECK_EQ(bytes, 12);
    lmpi_view_clear(&view);
    lmpi_impl_Type_free(&six);
    /* typemaps run forward; overlaps only in a file nobody writes (MPICH's
     * io/tst_fileview) */
    {
        int fwd_bl[2] = {1, 1}, fwd_dp[2] = {3, 0}, ov_bl[2] = {3, 1}, ov_dp[2] = {0, 1};
        MPI_Datatype back, over;
        CHECK_EQ(lmpi_impl_Type_indexed(2, (lmpi_iarray){fwd_bl, 4}, (lmpi_iarray){fwd_dp, 4}, D(MPI_INT), &back),
                 LMPI_OK);
        CHECK_EQ(lmpi_impl_Type_indexed(2, (lmpi_iarray){ov_bl, 4}, (lmpi_iarray){ov_dp, 4}, D(MPI_INT), &over),
                 LMPI_OK);
        CHECK_EQ(lmpi_impl_Type_commit(&back), LMPI_OK);
        CHECK_EQ(lmpi_impl_Type_commit(&over), LMPI_OK);
        CHECK_EQ(lmpi_view_build(&view, 0, D(MPI_INT), D(back), "native", false), LMPI_ERR_IO);
        CHECK_EQ(lmpi_view_build(&view, 0, D(back), D(back), "native", false), LMPI_ERR_IO);
        CHECK_EQ(lmpi_view_build(&view, 0, D(MPI_INT), D(over), "native", true), LMPI_ERR_IO);
        CHECK_EQ(lmpi_view_build(&view, 0, D(over), D(over), "native", true), LMPI_ERR_IO);
        CHECK_EQ(lmpi_view_build(&view, 0, D(MPI_INT), D(over), "native", false), LMPI_OK);
        lmpi_view_clear(&view);
        CHECK_EQ(lmpi_view_build(&view, 0, D(over), D(over), "native", false), LMPI_OK);
        lmpi_view_clear(&view);
        lmpi_impl_Type_free(&back);
        lmpi_impl_Type_free(&over);
    }
    /* external32: MPI_LONG is 4 bytes in the file, a dense view of them stays dense */
    CHECK_EQ(lmpi_view_build(&view, 8, D(MPI_LONG), D(MPI_LONG), "external32", true), LMPI_OK);
    CHECK_EQ(view.esize, 4);
    MPI_Count ext;
    CHECK_EQ(lmpi_view_type_extent(&view, D(MPI_LONG), &ext), LMPI_OK);
    CHECK_EQ(ext, 4);
    CHECK_EQ(lmpi_view_offset(&view, 12), 20);
    long in[2] = {-2, 70000};
    unsigned char out[8];
    CHECK_EQ(lmpi_view_to_file(&view, in, 2, D(MPI_LONG), 0, out, 8), LMPI_OK);
    CHECK(out[0] == 0xff && out[3] == 0xfe && out[4] == 0 && out[5] == 0x01 && out[6] == 0x11 && out[7] == 0x70);
    long back[2] = {0, 0};
    CHECK_EQ(lmpi_view_from_file(&view, back, 2, D(MPI_LONG), 0, out, 8), LMPI_OK);
    CHECK(back[0] == -2 && back[1] == 70000);
    lmpi_view_clear(&view);
}

static int ext_calls;
static int twice(MPI_Datatype t, MPI_Aint *e, void *extra)
{
    (void)extra;
    ext_calls++;
    *e = 2 * D(t)->size;
    return MPI_SUCCESS;
}

static void test_datareps(void)
{
    CHECK_EQ(lmpi_impl_Register_datarep("unit-twice", NULL, NULL, twice, NULL), LMPI_OK);
    CHECK_EQ(lmpi_impl_Register_datarep("unit-twice", NULL, NULL, twice, NULL), LMPI_ERR_DUP_DATAREP);
    CHECK_EQ(lmpi_impl_Register_datarep("native", NULL, NULL, twice, NULL), LMPI_ERR_DUP_DATAREP);
    CHECK_EQ(lmpi_impl_Register_datarep("unit-none", NULL, NULL, NULL, NULL), LMPI_ERR_ARG);
    lmpi_view view;
    CHECK_EQ(lmpi_view_build(&view, 0, D(MPI_INT), D(MPI_INT), "unit-twice", true), LMPI_OK);
    CHECK_EQ(view.esize, 8);
    CHECK(ext_calls > 0);
    MPI_Count bytes;
    CHECK_EQ(lmpi_view_stream_bytes(&view, 5, D(MPI_INT), &bytes), LMPI_OK);
    CHECK_EQ(bytes, 40);
    lmpi_view_clear(&view);
    lmpi_datarep_finalize();
    CHECK_EQ(lmpi_view_build(&view, 0, D(MPI_INT), D(MPI_INT), "unit-twice", true), LMPI_ERR_UNSUPPORTED_DATAREP);
}

static void test_errno(void)
{
    CHECK_EQ(lmpi_io_errno(ENOENT, "open", "f"), LMPI_ERR_NO_SUCH_FILE);
    CHECK_EQ(lmpi_io_errno(EACCES, "open", "f"), LMPI_ERR_ACCESS);
    CHECK_EQ(lmpi_io_errno(EEXIST, "open", "f"), LMPI_ERR_FILE_EXISTS);
    CHECK_EQ(lmpi_io_errno(ENOSPC, "pwrite", "f"), LMPI_ERR_NO_SPACE);
    CHECK_EQ(lmpi_io_errno(EDQUOT, "pwrite", "f"), LMPI_ERR_QUOTA);
    CHECK_EQ(lmpi_io_errno(EROFS, "open", "f"), LMPI_ERR_READ_ONLY);
    CHECK_EQ(lmpi_io_errno(EISDIR, "open", "f"), LMPI_ERR_BAD_FILE);
    CHECK_EQ(lmpi_io_errno(EIO, "pread", "f"), LMPI_ERR_IO);
}

int main(int argc, char **argv)
{
    lmpi_datatype_init_builtin();
    int64_t before = lmpi_mem_current(LMPI_MEM_DATATYPE);
    test_vector_views(argc > 1 ? atoi(argv[1]) : 3000);
    test_special_views();
    test_datareps();
    test_errno();
    CHECK_EQ(lmpi_mem_current(LMPI_MEM_DATATYPE), before); /* every type freed */
    CHECK_EQ(lmpi_mem_current(LMPI_MEM_IO), 0);
    return unit_finish("test_io");
}
