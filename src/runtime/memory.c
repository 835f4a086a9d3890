/* The accounting allocator.  Every block carries a 16-byte header with its
 * size and category so that lmpi_free() can debit the right counter; the
 * counters are relaxed atomics because under MPI_THREAD_MULTIPLE allocation
 * can happen outside the global lock (in user callbacks).  Hot paths do not
 * come here: they take objects from pools. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/lmpi.h"

typedef struct {
    size_t size;
    size_t cat;
} block_header;

_Static_assert(sizeof(block_header) == 16, "keep user memory 16-byte aligned");

static _Atomic int64_t mem_current[LMPI_MEM_NCAT];
static _Atomic int64_t mem_peak[LMPI_MEM_NCAT];

static const char *const cat_names[] = {
#define LMPI_MEM_NAME(name, text) text,
    LMPI_MEM_CATEGORIES(LMPI_MEM_NAME)
#undef LMPI_MEM_NAME
};

const char *lmpi_mem_cat_name(lmpi_mem_cat cat)
{
    return (unsigned)cat < LMPI_MEM_NCAT ? cat_names[cat] : "?";
}

void lmpi_mem_account(lmpi_mem_cat cat, int64_t delta)
{
    int64_t now = atomic_fetch_add_explicit(&mem_current[cat], delta, memory_order_relaxed) + delta;
    int64_t peak = atomic_load_explicit(&mem_peak[cat], memory_order_relaxed);
    while (now > peak &&
           !atomic_compare_exchange_weak_explicit(&mem_peak[cat], &peak, now, memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}

int64_t lmpi_mem_current(lmpi_mem_cat cat)
{
    return atomic_load_explicit(&mem_current[cat], memory_order_relaxed);
}

int64_t lmpi_mem_peak(lmpi_mem_cat cat)
{
    return atomic_load_explicit(&mem_peak[cat], memory_order_relaxed);
}

void *lmpi_malloc(size_t size, lmpi_mem_cat cat)
{
    block_header *h = malloc(sizeof(*h) + size);
    if (!h)
        return NULL;
    h->size = size;
    h->cat = cat;
    lmpi_mem_account(cat, (int64_t)size);
    return h + 1;
}

void *lmpi_calloc(size_t n, size_t size, lmpi_mem_cat cat)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *p = lmpi_malloc(n * size, cat);
    if (p)
        memset(p, 0, n * size);
    return p;
}

void *lmpi_realloc(void *p, size_t size, lmpi_mem_cat cat)
{
    if (!p)
        return lmpi_malloc(size, cat);
    block_header *h = (block_header *)p - 1;
    size_t old = h->size;
    lmpi_mem_cat old_cat = (lmpi_mem_cat)h->cat;
    block_header *n = realloc(h, sizeof(*n) + size);
    if (!n)
        return NULL;
    n->size = size;
    n->cat = cat;
    lmpi_mem_account(old_cat, -(int64_t)old);
    lmpi_mem_account(cat, (int64_t)size);
    return n + 1;
}

void lmpi_free(void *p)
{
    if (!p)
        return;
    block_header *h = (block_header *)p - 1;
    lmpi_mem_account((lmpi_mem_cat)h->cat, -(int64_t)h->size);
    free(h);
}

/* An object name as MPI_*_set_name keeps it: at most MPI_MAX_OBJECT_NAME - 1
 * characters; replaces *slot.  NULL name: MPI_ERR_ARG naming `what`. */
lmpi_status lmpi_set_object_name(char **slot, const char *name, const char *what, lmpi_mem_cat cat)
{
    if (!name) {
        lmpi_err_detail("%s is NULL", what);
        return LMPI_ERR_ARG;
    }
    size_t n = strnlen(name, MPI_MAX_OBJECT_NAME - 1);
    char *copy = lmpi_malloc(n + 1, cat);
    if (!copy)
        return LMPI_ERR_NO_MEM;
    memcpy(copy, name, n);
    copy[n] = '\0';
    lmpi_free(*slot);
    *slot = copy;
    return LMPI_OK;
}

char *lmpi_strdup(const char *s, lmpi_mem_cat cat)
{
    size_t n = strlen(s) + 1;
    char *d = lmpi_malloc(n, cat);
    if (d)
        memcpy(d, s, n);
    return d;
}
