/* Reduction operations: every predefined operation on representative types
 * against values computed here, MINLOC/MAXLOC with ties, derived datatypes,
 * user operations (non-commutative, large-count form), and the
 * combinations the standard does not define. */
#include <complex.h>
#include <stdbool.h>
#include <string.h>

#include "binding/gen/impl.h"
#include "coll/op.h"
#include "unit.h"

static lmpi_datatype *D(MPI_Datatype h) { return lmpi_datatype_from_handle(h); }

static int reduce(const void *in, void *inout, MPI_Count n, MPI_Datatype t, MPI_Op op)
{
    return lmpi_impl_Reduce_local(in, inout, n, D(t), op);
}

static void test_integers(void)
{
    int a[6] = {1, -2, 3, 0, 7, 5}, b[6] = {4, 5, -6, 0, 7, 0}, r[6];
    const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
    for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
        memcpy(r, b, sizeof(r));
        CHECK_EQ(reduce(a, r, 6, MPI_INT, ops[k]), LMPI_OK);
        for (int i = 0; i < 6; i++) {
            int x = a[i], y = b[i], e = 0;
            switch (k) {
            case 0: e = x + y; break;
            case 1: e = x * y; break;
            case 2: e = x > y ? x : y; break;
            case 3: e = x < y ? x : y; break;
            case 4: e = x && y; break;
            case 5: e = x || y; break;
            case 6: e = !x != !y; break;
            case 7: e = x & y; break;
            case 8: e = x | y; break;
            default: e = x ^ y; break;
            }
            CHECK_EQ(r[i], e);
        }
    }
    unsigned char u[3] = {250, 3, 0x0f}, v[3] = {10, 200, 0xf0};
    CHECK_EQ(reduce(u, v, 3, MPI_UNSIGNED_CHAR, MPI_SUM), LMPI_OK);
    CHECK_EQ(v[0], 4); /* wraps as unsigned char */
    int64_t big[2] = {INT64_MAX / 2, -5}, big2[2] = {INT64_MAX / 2, 5};
    CHECK_EQ(reduce(big, big2, 2, MPI_INT64_T, MPI_SUM), LMPI_OK);
    CHECK_EQ(big2[0], (INT64_MAX / 2) * 2);
    unsigned char by[2] = {0x0f, 0xff}, by2[2] = {0xf0, 0x0f};
    CHECK_EQ(reduce(by, by2, 2, MPI_BYTE, MPI_BOR), LMPI_OK);
    CHECK_EQ(by2[0], 0xff);
    bool t[2] = {true, false}, f[2] = {true, true};
    CHECK_EQ(reduce(t, f, 2, MPI_C_BOOL, MPI_LAND), LMPI_OK);
    CHECK(f[0] && !f[1]);
}

static void test_floats(void)
{
    double a[3] = {1.5, -2, 4}, b[3] = {2, 3, -1};
    CHECK_EQ(reduce(a, b, 3, MPI_DOUBLE, MPI_PROD), LMPI_OK);
    CHECK_EQ(b[0] * 4, 12);
    CHECK_EQ(b[1], -6);
    long double la[2] = {1.25L, 7}, lb[2] = {2, 3};
    CHECK_EQ(reduce(la, lb, 2, MPI_LONG_DOUBLE, MPI_MAX), LMPI_OK);
    CHECK_EQ(lb[1], 7);
    double _Complex ca[1] = {1 + 2 * I}, cb[1] = {3 - 1 * I};
    CHECK_EQ(reduce(ca, cb, 1, MPI_C_DOUBLE_COMPLEX, MPI_PROD), LMPI_OK);
    CHECK_EQ(creal(cb[0]), 5);
    CHECK_EQ(cimag(cb[0]), 5);
    float fa[2] = {1, 2}, fb[2] = {3, 1};
    CHECK_EQ(reduce(fa, fb, 2, MPI_REAL, MPI_MIN), LMPI_OK);
    CHECK_EQ(fb[0], 1);
}

static void test_loc(void)
{
    struct { double v; int i; } a[3] = {{1, 5}, {2, 1}, {3, 9}}, b[3] = {{1, 2}, {5, 0}, {3, 4}};
    CHECK_EQ(reduce(a, b, 3, MPI_DOUBLE_INT, MPI_MINLOC), LMPI_OK);
    CHECK_EQ(b[0].i, 2); /* tie: smaller index */
    CHECK_EQ(b[1].v, 2);
    CHECK_EQ(b[1].i, 1);
    CHECK_EQ(b[2].i, 4);
    struct { short v; int i; } s[2] = {{7, 1}, {-1, 3}}, t[2] = {{7, 0}, {4, 2}};
    CHECK_EQ(reduce(s, t, 2, MPI_SHORT_INT, MPI_MAXLOC), LMPI_OK);
    CHECK_EQ(t[0].i, 0);
    CHECK_EQ(t[1].v, 4);
    int p[4] = {3, 10, 8, 11}, q[4] = {3, 7, 9, 1};
    CHECK_EQ(reduce(p, q, 2, MPI_2INT, MPI_MAXLOC), LMPI_OK);
    CHECK_EQ(q[1], 7);
    CHECK_EQ(q[2], 9);
}

/* a strided type: the reduction touches only its elements */
static void test_derived(void)
{
    MPI_Datatype v;
    lmpi_impl_Type_vector(3, 1, 2, D(MPI_DOUBLE), &v);
    lmpi_impl_Type_commit(&v);
    double a[6] = {1, 100, 2, 100, 3, 100}, b[6] = {10, -1, 20, -1, 30, -1};
    CHECK_EQ(reduce(a, b, 1, v, MPI_SUM), LMPI_OK);
    CHECK_EQ(b[0], 11);
    CHECK_EQ(b[1], -1);
    CHECK_EQ(b[4], 33);
    CHECK_EQ(reduce(a, b, 1, v, MPI_REPLACE), LMPI_OK);
    CHECK_EQ(b[2], 2);
    CHECK_EQ(b[3], -1);
    lmpi_impl_Type_free(&v);
    /* a struct of an int and a double has no single basic type */
    MPI_Datatype st, ts[2] = {MPI_INT, MPI_DOUBLE};
    int bl[2] = {1, 1};
    MPI_Aint dp[2] = {0, 8};
    lmpi_impl_Type_create_struct(2, (lmpi_iarray){bl, 4}, (lmpi_iarray){dp, 8}, ts, &st);
    CHECK_EQ(reduce(a, b, 1, st, MPI_SUM), LMPI_ERR_OP);
    CHECK_EQ(reduce(a, b, 1, st, MPI_REPLACE), LMPI_OK);
    lmpi_impl_Type_free(&st);
}

/* non-commutative: 2x2 matrices multiplied, inout = in * inout */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    double *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        double r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                       a[2] * b[1] + a[3] * b[3]};
        memcpy(b, r, sizeof(r));
    }
}

static void count_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    (void)in, (void)dt;
    ((MPI_Count *)inout)[0] = *len;
}

static void test_user(void)
{
    MPI_Op op;
    CHECK_EQ(lmpi_impl_Op_create(matmul, 0, &op), LMPI_OK);
    int commute = -1;
    lmpi_impl_Op_commutative(op, &commute);
    CHECK_EQ(commute, 0);
    MPI_Datatype m;
    lmpi_impl_Type_contiguous(4, D(MPI_DOUBLE), &m);
    lmpi_impl_Type_commit(&m);
    double a[4] = {1, 2, 0, 1}, b[4] = {1, 0, 3, 1};
    CHECK_EQ(reduce(a, b, 1, m, op), LMPI_OK);
    CHECK_EQ(b[0], 7); /* [1 2; 0 1] x [1 0; 3 1] = [7 2; 3 1] */
    CHECK_EQ(b[1], 2);
    CHECK_EQ(b[2], 3);
    lmpi_impl_Type_free(&m);
    lmpi_impl_Op_free(&op);
    CHECK(op == MPI_OP_NULL);
    MPI_Op oc;
    lmpi_impl_Op_create_c(count_c, 1, &oc);
    MPI_Count x[8] = {0}, y[8] = {0};
    CHECK_EQ(reduce(x, y, 8, MPI_COUNT, oc), LMPI_OK);
    CHECK_EQ(y[0], 8);
    lmpi_impl_Op_free(&oc);
}

static void test_invalid(void)
{
    char c[2] = {1, 2}, d[2] = {1, 2};
    double _Complex z[1] = {1}, w[1] = {1};
    float f[1] = {1}, g[1] = {2};
    int i[2] = {1, 2}, j[2] = {1, 2};
    CHECK_EQ(reduce(c, d, 2, MPI_BYTE, MPI_SUM), LMPI_ERR_OP);
    /* MPI_CHAR reduces as a signed 8-bit integer, as both peers (issue 41) */
    char e[2] = {-100, 2}, h[2] = {-100, 3};
    CHECK_EQ(reduce(e, h, 2, MPI_CHAR, MPI_SUM), LMPI_OK);
    CHECK_EQ(h[0], (char)56); /* -200 wraps in 8 bits */
    CHECK_EQ(h[1], 5);
    CHECK_EQ(reduce(e, h, 2, MPI_CHAR, MPI_MIN), LMPI_OK);
    CHECK_EQ(h[0], -100);
    CHECK_EQ(reduce(i, j, 2, MPI_WCHAR, MPI_SUM), LMPI_ERR_OP);
    CHECK_EQ(reduce(z, w, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX), LMPI_ERR_OP);
    CHECK_EQ(reduce(f, g, 1, MPI_FLOAT, MPI_BAND), LMPI_ERR_OP);
    CHECK_EQ(reduce(i, j, 1, MPI_INT, MPI_MINLOC), LMPI_ERR_OP);
    CHECK_EQ(reduce(i, j, 1, MPI_INT, MPI_OP_NULL), LMPI_ERR_OP);
    MPI_Op pre = MPI_SUM;
    CHECK_EQ(lmpi_impl_Op_free(&pre), LMPI_ERR_OP);
    CHECK_EQ(reduce(i, j, 2, MPI_INT, MPI_NO_OP), LMPI_OK);
    CHECK_EQ(j[1], 2);
}

int main(void)
{
    lmpi_datatype_init_builtin();
    int64_t before = lmpi_mem_current(LMPI_MEM_COLL);
    test_integers();
    test_floats();
    test_loc();
    test_derived();
    test_user();
    test_invalid();
    CHECK_EQ(lmpi_mem_current(LMPI_MEM_COLL), before);
    return unit_finish("test_op");
}
