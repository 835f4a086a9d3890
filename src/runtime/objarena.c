/* Objects the user holds handles to, from one reserved range (objarena.h).
 * The range is reserved without access (no memory, no commit charge) and
 * opened in 1 MiB steps as objects are handed out; freed objects go to a
 * free list per 64-byte size class and are reused, never unmapped, so a
 * stale handle still points at readable memory (its magic word cleared). */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "runtime/objarena.h"

#define RESERVE ((size_t)64 << 30) /* address space, not memory */
#define STEP ((size_t)1 << 20)
#define CLASS 64
#define NCLASSES 1024 /* up to 64 KiB; larger objects are not reused */

uintptr_t lmpi_obj_base;
size_t lmpi_obj_used;
bool lmpi_obj_unreserved;
static size_t opened;
static void *free_list[NCLASSES];
static bool tried;
/* Requests are made on message paths under the big lock; objects also by
 * progress-thread-free code: one small lock keeps the bump pointer sane. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static bool reserve(void)
{
    tried = true;
    void *p = mmap(NULL, RESERVE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        lmpi_obj_unreserved = true; /* handles are then checked by their magic word only */
        return false;
    }
    lmpi_obj_base = (uintptr_t)p;
    return true;
}

void *lmpi_obj_alloc(size_t size, lmpi_mem_cat cat)
{
    size_t rounded = (size + CLASS - 1) / CLASS * CLASS;
    size_t cls = rounded / CLASS;
    pthread_mutex_lock(&lock);
    if (!tried)
        reserve();
    if (!lmpi_obj_base) {
        pthread_mutex_unlock(&lock);
        return lmpi_calloc(1, size, cat);
    }
    void *p = NULL;
    if (cls < NCLASSES && free_list[cls]) {
        p = free_list[cls];
        free_list[cls] = *(void **)((char *)p + 8);
    } else {
        if (lmpi_obj_used + rounded > opened) {
            size_t want = (lmpi_obj_used + rounded - opened + STEP - 1) / STEP * STEP;
            if (opened + want > RESERVE ||
                mprotect((char *)lmpi_obj_base + opened, want, PROT_READ | PROT_WRITE) != 0) {
                pthread_mutex_unlock(&lock);
                return NULL;
            }
            opened += want;
        }
        p = (char *)lmpi_obj_base + lmpi_obj_used;
        lmpi_obj_used += rounded;
    }
    pthread_mutex_unlock(&lock);
    memset(p, 0, rounded);
    lmpi_mem_account(cat, (int64_t)rounded);
    return p;
}

void lmpi_obj_free(void *p, size_t size, lmpi_mem_cat cat)
{
    if (!p)
        return;
    if (!lmpi_obj_base) {
        lmpi_free(p);
        return;
    }
    size_t rounded = (size + CLASS - 1) / CLASS * CLASS;
    size_t cls = rounded / CLASS;
    lmpi_mem_account(cat, -(int64_t)rounded);
    /* zeroed (the magic word with it); the link lives in the second word,
     * away from the magic word at the start */
    memset(p, 0, rounded);
    if (cls >= NCLASSES)
        return; /* kept readable and unused */
    pthread_mutex_lock(&lock);
    *(void **)((char *)p + 8) = free_list[cls];
    free_list[cls] = p;
    pthread_mutex_unlock(&lock);
}
