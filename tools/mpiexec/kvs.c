/* mpiexec: the key-value space of each job (PMI put/get), hashed by key. */
#include "mpiexec.h"

/* ---- key-value space ------------------------------------------------------ */
void kv_set(kv_t **kvs, int *n, int *cap, const char *key, const char *value)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp((*kvs)[i].key, key)) {
            free((*kvs)[i].value);
            (*kvs)[i].value = strdup(value);
            return;
        }
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        *kvs = realloc(*kvs, sizeof(kv_t) * (size_t)*cap);
        if (!*kvs)
            die("out of memory");
    }
    (*kvs)[*n].key = strdup(key);
    (*kvs)[*n].value = strdup(value);
    (*n)++;
}

int kv_find(const kv_t *kvs, int n, const char *key)
{
    for (int i = n - 1; i >= 0; i--)
        if (!strcmp(kvs[i].key, key))
            return i;
    return -1;
}

static size_t kv_hash(const char *key)
{
    size_t h = 14695981039346656037u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211u;
    return h;
}

/* The index slot holding key, or the empty slot where it would go. */
static size_t kvs_slot(const job_t *j, const char *key)
{
    size_t mask = j->kv_index_cap - 1, i = kv_hash(key) & mask;
    while (j->kv_index[i] && strcmp(j->kvs[j->kv_index[i] - 1].key, key))
        i = (i + 1) & mask;
    return i;
}

static void kvs_reindex(job_t *j)
{
    size_t cap = j->kv_index_cap ? 2 * j->kv_index_cap : 256;
    while (cap < 2 * (size_t)(j->n_kvs + 1))
        cap *= 2;
    free(j->kv_index);
    j->kv_index = calloc(cap, sizeof(int));
    if (!j->kv_index)
        die("out of memory");
    j->kv_index_cap = cap;
    for (int k = 0; k < j->n_kvs; k++)
        j->kv_index[kvs_slot(j, j->kvs[k].key)] = k + 1;
}

bool kvs_put(job_t *j, const char *key, const char *value)
{
    if (2 * (size_t)(j->n_kvs + 1) > j->kv_index_cap)
        kvs_reindex(j);
    size_t at = kvs_slot(j, key);
    if (j->kv_index[at]) {
        kv_t *e = &j->kvs[j->kv_index[at] - 1];
        char *v = strdup(value);
        if (!v)
            die("out of memory");
        free(e->value);
        e->value = v;
        return true;
    }
    if (j->n_kvs >= KVS_KEYS_PER_PROC * (j->n + 1))
        return false;
    if (j->n_kvs == j->cap_kvs) {
        j->cap_kvs = j->cap_kvs ? 2 * j->cap_kvs : 64;
        j->kvs = realloc(j->kvs, sizeof(kv_t) * (size_t)j->cap_kvs);
        if (!j->kvs)
            die("out of memory");
    }
    j->kvs[j->n_kvs].key = strdup(key);
    j->kvs[j->n_kvs].value = strdup(value);
    if (!j->kvs[j->n_kvs].key || !j->kvs[j->n_kvs].value)
        die("out of memory");
    j->kv_index[at] = ++j->n_kvs;
    return true;
}

const char *kvs_get(const job_t *j, const char *key)
{
    if (!j->kv_index_cap)
        return NULL;
    int i = j->kv_index[kvs_slot(j, key)];
    return i ? j->kvs[i - 1].value : NULL;
}
