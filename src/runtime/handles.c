/* MPI_x_toint / MPI_x_fromint: integer handles for Fortran and language
 * bindings.  Predefined handles are their own small integers; other objects
 * get an index in one table, starting above every predefined value. */
#include "binding/gen/impl.h"

#define FIRST_DYNAMIC 0x1000

static void **table;
static int used, cap;

static int to_int(void *h)
{
    uintptr_t v = (uintptr_t)h;
    if (v < LMPI_PREDEF_LIMIT)
        return (int)v;
    for (int i = 0; i < used; i++)
        if (table[i] == h)
            return FIRST_DYNAMIC + i;
    if (used == cap) {
        int ncap = cap ? 2 * cap : 64;
        void **n = lmpi_realloc(table, sizeof(void *) * (size_t)ncap, LMPI_MEM_OTHER);
        if (!n)
            return -1;
        table = n;
        cap = ncap;
    }
    table[used] = h;
    return FIRST_DYNAMIC + used++;
}

static void *from_int(int i)
{
    if (i >= 0 && i < (int)LMPI_PREDEF_LIMIT)
        return (void *)(uintptr_t)i;
    if (i >= FIRST_DYNAMIC && i < FIRST_DYNAMIC + used)
        return table[i - FIRST_DYNAMIC];
    return NULL;
}

#define HANDLE_CONVERSIONS(T, name)                                     \
    int lmpi_impl_##name##_toint(T h) { return to_int((void *)h); }     \
    T lmpi_impl_##name##_fromint(int i) { return (T)from_int(i); }     \
    MPI_Fint lmpi_impl_##name##_c2f(T h) { return to_int((void *)h); } \
    T lmpi_impl_##name##_f2c(MPI_Fint i) { return (T)from_int(i); }

HANDLE_CONVERSIONS(MPI_Comm, Comm)
HANDLE_CONVERSIONS(MPI_Errhandler, Errhandler)
HANDLE_CONVERSIONS(MPI_File, File)
HANDLE_CONVERSIONS(MPI_Group, Group)
HANDLE_CONVERSIONS(MPI_Info, Info)
HANDLE_CONVERSIONS(MPI_Message, Message)
HANDLE_CONVERSIONS(MPI_Op, Op)
HANDLE_CONVERSIONS(MPI_Request, Request)
HANDLE_CONVERSIONS(MPI_Session, Session)
HANDLE_CONVERSIONS(MPI_Datatype, Type)
HANDLE_CONVERSIONS(MPI_Win, Win)
