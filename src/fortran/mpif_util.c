/* Conversions shared by the Fortran procedures (mpif_util.h). */
#include <string.h>

#include "fortran/mpif_util.h"

/* aligned as gfortran aligns common blocks, which name the same storage */
#define COMMON_BLOCK __attribute__((aligned(32)))
COMMON_BLOCK int lmpif_bottom_;
COMMON_BLOCK int lmpif_in_place_;
COMMON_BLOCK int lmpif_buffer_automatic_;
COMMON_BLOCK int lmpif_status_ignore_[MPI_F_STATUS_SIZE];
COMMON_BLOCK int lmpif_statuses_ignore_[MPI_F_STATUS_SIZE];
COMMON_BLOCK int lmpif_errcodes_ignore_[1];
COMMON_BLOCK int lmpif_unweighted_[1];
COMMON_BLOCK int lmpif_weights_empty_[1];
COMMON_BLOCK char lmpif_argv_null_[1];
COMMON_BLOCK char lmpif_argvs_null_[1];

/* C code that a Fortran program calls compares a status it is given with
 * MPI_F_STATUS_IGNORE and friends: LeanMPI's C library defines them as
 * pointers, which this library points at its sentinels when it is loaded.
 * Weak: another implementation of the ABI (MPICH's libmpi_abi) has none. */
#pragma weak MPI_F_STATUS_IGNORE
#pragma weak MPI_F_STATUSES_IGNORE
#pragma weak MPI_F08_STATUS_IGNORE
#pragma weak MPI_F08_STATUSES_IGNORE
__attribute__((constructor)) static void tell_c_the_status_sentinels(void)
{
    if (&MPI_F_STATUS_IGNORE && &MPI_F_STATUSES_IGNORE) {
        MPI_F_STATUS_IGNORE = lmpif_status_ignore_;
        MPI_F_STATUSES_IGNORE = lmpif_statuses_ignore_;
    }
    /* mpi_f08's MPI_STATUS_IGNORE is bound to the same storage */
    if (&MPI_F08_STATUS_IGNORE && &MPI_F08_STATUSES_IGNORE) {
        MPI_F08_STATUS_IGNORE = (MPI_F08_status *)(void *)lmpif_status_ignore_;
        MPI_F08_STATUSES_IGNORE = (MPI_F08_status *)(void *)lmpif_statuses_ignore_;
    }
}

/* Every handle of the ABI is a pointer; the class picks the conversion. */
static void *from_int(int cls, MPI_Fint v)
{
    switch (cls) {
    case LMPIF_COMM: return MPI_Comm_fromint(v);
    case LMPIF_TYPE: return MPI_Type_fromint(v);
    case LMPIF_GROUP: return MPI_Group_fromint(v);
    case LMPIF_REQUEST: return MPI_Request_fromint(v);
    case LMPIF_INFO: return MPI_Info_fromint(v);
    case LMPIF_ERRHANDLER: return MPI_Errhandler_fromint(v);
    case LMPIF_FILE: return MPI_File_fromint(v);
    case LMPIF_MESSAGE: return MPI_Message_fromint(v);
    case LMPIF_OP: return MPI_Op_fromint(v);
    case LMPIF_SESSION: return MPI_Session_fromint(v);
    default: return MPI_Win_fromint(v);
    }
}

static MPI_Fint to_int(int cls, void *h)
{
    switch (cls) {
    case LMPIF_COMM: return MPI_Comm_toint(h);
    case LMPIF_TYPE: return MPI_Type_toint(h);
    case LMPIF_GROUP: return MPI_Group_toint(h);
    case LMPIF_REQUEST: return MPI_Request_toint(h);
    case LMPIF_INFO: return MPI_Info_toint(h);
    case LMPIF_ERRHANDLER: return MPI_Errhandler_toint(h);
    case LMPIF_FILE: return MPI_File_toint(h);
    case LMPIF_MESSAGE: return MPI_Message_toint(h);
    case LMPIF_OP: return MPI_Op_toint(h);
    case LMPIF_SESSION: return MPI_Session_toint(h);
    default: return MPI_Win_toint(h);
    }
}

void *lmpif_handles_in(int cls, const MPI_Fint *f, MPI_Fint n, bool convert)
{
    void **c = malloc(sizeof(void *) * (size_t)(n > 0 ? n : 1)); /* a count of 0 is no error */
    if (!c)
        return NULL;
    for (MPI_Fint i = 0; convert && i < n; i++)
        c[i] = from_int(cls, f[i]);
    return c;
}

void lmpif_handles_out(int cls, const void *c, MPI_Fint *f, MPI_Fint n)
{
    void *const *h = c;
    for (MPI_Fint i = 0; i < n; i++)
        f[i] = to_int(cls, h[i]);
}

void lmpif_handles_free(void *c) { free(c); }

char *lmpif_str_in(const char *f, size_t len)
{
    size_t start = 0;
    while (start < len && f[start] == ' ')
        start++;
    return lmpif_arg_in(f + start, len - start);
}

char *lmpif_arg_in(const char *f, size_t len)
{
    while (len > 0 && f[len - 1] == ' ')
        len--;
    char *c = malloc(len + 1);
    if (c) {
        memcpy(c, f, len);
        c[len] = '\0';
    }
    return c;
}

/* The C call writes up to its own maximum (MPI_MAX_LIBRARY_VERSION_STRING
 * is the largest), whatever the Fortran variable's length. */
char *lmpif_str_buf(size_t len)
{
    size_t n = len + 1 > MPI_MAX_LIBRARY_VERSION_STRING + 1 ? len + 1 : MPI_MAX_LIBRARY_VERSION_STRING + 1;
    return calloc(1, n);
}

void lmpif_str_out(char *c, char *f, size_t len, bool copy)
{
    if (copy) {
        size_t n = strlen(c);
        if (n > len)
            n = len;
        memcpy(f, c, n);
        memset(f + n, ' ', len - n);
    }
    free(c);
}

bool lmpif_str_blank(const char *f, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (f[i] != ' ')
            return false;
    return true;
}

int *lmpif_logicals_in(const MPI_Fint *f, MPI_Fint n)
{
    int *c = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    for (MPI_Fint i = 0; c && i < n; i++)
        c[i] = lmpif_from_logical(f[i]);
    return c;
}

void lmpif_logicals_out(const int *c, MPI_Fint *f, MPI_Fint n)
{
    for (MPI_Fint i = 0; i < n; i++)
        f[i] = lmpif_to_logical(c[i]);
}

/* The lengths of arrays the standard leaves to the communicator (an error
 * in the call reports itself when the library sees the communicator). */
MPI_Fint lmpif_peers(MPI_Comm comm)
{
    int inter = 0, n = 0;
    if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return 0;
    (inter ? MPI_Comm_remote_size : MPI_Comm_size)(comm, &n);
    return n;
}

MPI_Fint lmpif_neighbours(MPI_Comm comm, bool incoming)
{
    int kind = MPI_UNDEFINED, in = 0, out = 0, weighted = 0, rank = 0;
    if (MPI_Topo_test(comm, &kind) != MPI_SUCCESS)
        return 0;
    if (kind == MPI_DIST_GRAPH) {
        MPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
    } else if (kind == MPI_GRAPH) {
        MPI_Comm_rank(comm, &rank);
        MPI_Graph_neighbors_count(comm, rank, &in);
        out = in;
    } else if (kind == MPI_CART) {
        MPI_Cartdim_get(comm, &in);
        in = out = 2 * in;
    }
    return incoming ? in : out;
}

MPI_Fint lmpif_cartdim(MPI_Comm comm)
{
    int n = 0;
    MPI_Cartdim_get(comm, &n);
    return n;
}

/* For mpi_f08's MPI_Cart_sub (a BIND(C) call with the handle type). */
MPI_Fint lmpif_cartdim_f(const MPI_Fint *comm) { return lmpif_cartdim(MPI_Comm_fromint(*comm)); }
