/* MPI_x_toint / MPI_x_fromint: integer handles for Fortran and language
 * bindings.  Predefined handles are their own small integers; other objects
 * get an index in one table, starting above every predefined value, found
 * again through an open-addressing hash of the pointer: the Fortran layer
 * converts every request it starts and waits for, so a conversion must not
 * cost a walk over every object ever converted.  An index stays with its
 * address: an object freed and another made at the same address share it,
 * which is all a language binding can tell apart. */
#include "binding/gen/impl.h"

#define FIRST_DYNAMIC 0x1000

static void **table; /* index - FIRST_DYNAMIC -> object */
static int used, cap;
static int32_t *slots; /* hash of the object -> its index in table, -1: empty */
static uint32_t nslots; /* a power of two, at least twice used */

static uint32_t slot_of(const void *h)
{
    uint64_t x = (uint64_t)(uintptr_t)h * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(x >> 32) & (nslots - 1);
}

static bool grow_slots(void)
{
    uint32_t n = nslots ? 2 * nslots : 256;
    int32_t *s = lmpi_malloc(sizeof(int32_t) * n, LMPI_MEM_OTHER);
    if (!s)
        return false;
    for (uint32_t i = 0; i < n; i++)
        s[i] = -1;
    lmpi_free(slots);
    slots = s;
    nslots = n;
    for (int i = 0; i < used; i++) {
        uint32_t k = slot_of(table[i]);
        while (slots[k] >= 0)
            k = (k + 1) & (nslots - 1);
        slots[k] = i;
    }
    return true;
}

static int to_int(void *h)
{
    uintptr_t v = (uintptr_t)h;
    if (v < LMPI_PREDEF_LIMIT)
        return (int)v;
    if (nslots) {
        for (uint32_t k = slot_of(h); slots[k] >= 0; k = (k + 1) & (nslots - 1))
            if (table[slots[k]] == h)
                return FIRST_DYNAMIC + slots[k];
    }
    if (used == cap) {
        int ncap = cap ? 2 * cap : 64;
        void **n = lmpi_realloc(table, sizeof(void *) * (size_t)ncap, LMPI_MEM_OTHER);
        if (!n)
            return -1;
        table = n;
        cap = ncap;
    }
    if (2 * (uint32_t)(used + 1) > nslots && !grow_slots())
        return -1;
    table[used] = h;
    uint32_t k = slot_of(h);
    while (slots[k] >= 0)
        k = (k + 1) & (nslots - 1);
    slots[k] = used;
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
