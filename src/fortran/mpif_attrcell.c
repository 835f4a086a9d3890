/* The registry of attribute cells (mpif_attrcell.h): a chained hash table
 * keyed by the cell's address.  The chain links live in the cells, so a
 * lookup compares addresses and never reads through an address that is not
 * a cell. */
#include <pthread.h>
#include <stdlib.h>

#include "fortran/mpif_attrcell.h"

typedef struct cell {
    intptr_t value; /* first: the cell's address is the value's */
    struct cell *next;
} cell;

#define BUCKETS 1024u

static cell *bucket[BUCKETS];
static long count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned slot(const void *p)
{
    uintptr_t a = (uintptr_t)p >> 4; /* malloc aligns to 16 */
    return (unsigned)((a ^ (a >> 10) ^ (a >> 20)) % BUCKETS);
}

intptr_t *lmpif_cell_new(intptr_t value)
{
    cell *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    c->value = value;
    pthread_mutex_lock(&lock);
    unsigned s = slot(c);
    c->next = bucket[s];
    bucket[s] = c;
    count++;
    pthread_mutex_unlock(&lock);
    return &c->value;
}

/* The link that points at p, or NULL (call with the lock held). */
static cell **find(const void *p)
{
    if (!p)
        return NULL;
    for (cell **l = &bucket[slot(p)]; *l; l = &(*l)->next)
        if ((const void *)*l == p)
            return l;
    return NULL;
}

bool lmpif_cell_get(const void *p, intptr_t *value)
{
    pthread_mutex_lock(&lock);
    cell **l = find(p);
    if (l)
        *value = (*l)->value;
    pthread_mutex_unlock(&lock);
    return l != NULL;
}

void lmpif_cell_release(void *p)
{
    pthread_mutex_lock(&lock);
    cell **l = find(p), *c = NULL;
    if (l) {
        c = *l;
        *l = c->next;
        count--;
    }
    pthread_mutex_unlock(&lock);
    free(c);
}

long lmpif_cell_count(void)
{
    pthread_mutex_lock(&lock);
    long n = count;
    pthread_mutex_unlock(&lock);
    return n;
}
