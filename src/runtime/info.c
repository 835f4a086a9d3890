/* MPI_Info. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "binding/gen/impl.h"
#include "runtime/info.h"

static lmpi_info env_info = {.magic = LMPI_MAGIC_INFO};
static bool env_filled;

/* MPI_INFO_ENV: how the process was started, as the standard lists it. */
static void fill_env(void)
{
    if (env_filled)
        return;
    env_filled = true;
    char buf[64];
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (f) {
        char cmd[1024];
        size_t n = fread(cmd, 1, sizeof(cmd) - 1, f);
        fclose(f);
        cmd[n] = '\0';
        lmpi_info_put(&env_info, "command", cmd);
    }
    snprintf(buf, sizeof(buf), "%d", lmpi_rt.world_size ? lmpi_rt.world_size : 1);
    lmpi_info_put(&env_info, "maxprocs", buf);
    lmpi_info_put(&env_info, "host", lmpi_rt.processor_name[0] ? lmpi_rt.processor_name : "localhost");
    char cwd[1024];
    if (getcwd(cwd, sizeof(cwd)))
        lmpi_info_put(&env_info, "wdir", cwd);
    lmpi_info_put(&env_info, "thread_level",
                  lmpi_rt.thread_level == MPI_THREAD_MULTIPLE ? "MPI_THREAD_MULTIPLE" : "MPI_THREAD_SINGLE");
}

lmpi_status lmpi_info_arg(MPI_Info h, lmpi_info **out)
{
    *out = NULL;
    if (h == MPI_INFO_NULL)
        return LMPI_OK;
    if (h == MPI_INFO_ENV) {
        fill_env();
        *out = &env_info;
        return LMPI_OK;
    }
    lmpi_info *i = (lmpi_info *)h;
    if ((uintptr_t)h < LMPI_PREDEF_LIMIT || i->magic != LMPI_MAGIC_INFO) {
        lmpi_err_detail("not an info object (handle %p: freed or garbage)", (void *)h);
        return LMPI_ERR_INFO;
    }
    *out = i;
    return LMPI_OK;
}

/* Operations that need an object (MPI_INFO_NULL is an error for them). */
static lmpi_status need(MPI_Info h, lmpi_info **out)
{
    lmpi_status st = lmpi_info_arg(h, out);
    if (st == LMPI_OK && !*out) {
        lmpi_err_detail("info is MPI_INFO_NULL");
        return LMPI_ERR_INFO;
    }
    return st;
}

static lmpi_status check_key(const char *key)
{
    if (!key) {
        lmpi_err_detail("key is NULL");
        return LMPI_ERR_INFO_KEY;
    }
    size_t n = strlen(key);
    if (n == 0 || n >= MPI_MAX_INFO_KEY) {
        lmpi_err_detail("key \"%.40s\" has %zu characters (1 to %d allowed)", key, n, MPI_MAX_INFO_KEY - 1);
        return LMPI_ERR_INFO_KEY;
    }
    return LMPI_OK;
}

/* An object and a valid key: the start of every keyed operation. */
static lmpi_status keyed(MPI_Info h, const char *key, lmpi_info **out)
{
    lmpi_status st = need(h, out);
    return st == LMPI_OK ? check_key(key) : st;
}

lmpi_info *lmpi_info_new(void)
{
    lmpi_info *i = lmpi_calloc(1, sizeof(*i), LMPI_MEM_OTHER);
    if (i)
        i->magic = LMPI_MAGIC_INFO;
    return i;
}

static lmpi_info_entry *find(const lmpi_info *info, const char *key)
{
    for (lmpi_info_entry *e = info ? info->head : NULL; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

const char *lmpi_info_value(const lmpi_info *info, const char *key)
{
    lmpi_info_entry *e = find(info, key);
    return e ? e->value : NULL;
}

lmpi_status lmpi_info_put(lmpi_info *info, const char *key, const char *value)
{
    lmpi_info_entry *e = find(info, key);
    char *v = lmpi_strdup(value, LMPI_MEM_OTHER);
    if (!v)
        return LMPI_ERR_NO_MEM;
    if (e) {
        lmpi_free(e->value);
        e->value = v;
        return LMPI_OK;
    }
    e = lmpi_calloc(1, sizeof(*e), LMPI_MEM_OTHER);
    char *k = lmpi_strdup(key, LMPI_MEM_OTHER);
    if (!e || !k) {
        lmpi_free(e);
        lmpi_free(k);
        lmpi_free(v);
        return LMPI_ERR_NO_MEM;
    }
    e->key = k;
    e->value = v;
    lmpi_info_entry **tail = &info->head;
    while (*tail)
        tail = &(*tail)->next;
    *tail = e;
    info->nkeys++;
    return LMPI_OK;
}

lmpi_info *lmpi_info_copy(const lmpi_info *src)
{
    lmpi_info *n = lmpi_info_new();
    for (lmpi_info_entry *e = src ? src->head : NULL; n && e; e = e->next)
        if (lmpi_info_put(n, e->key, e->value) != LMPI_OK) {
            lmpi_info_destroy(n);
            return NULL;
        }
    return n;
}

void lmpi_info_destroy(lmpi_info *info)
{
    if (!info || info == &env_info)
        return;
    while (info->head) {
        lmpi_info_entry *e = info->head;
        info->head = e->next;
        lmpi_free(e->key);
        lmpi_free(e->value);
        lmpi_free(e);
    }
    info->magic = 0;
    lmpi_free(info);
}

lmpi_status lmpi_impl_Info_create(MPI_Info *info)
{
    lmpi_info *i = lmpi_info_new();
    if (!i)
        return LMPI_ERR_NO_MEM;
    *info = (MPI_Info)i;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    (void)argc, (void)argv;
    fill_env();
    lmpi_info *i = lmpi_info_copy(&env_info);
    if (!i)
        return LMPI_ERR_NO_MEM;
    *info = (MPI_Info)i;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Info_set(MPI_Info h, const char *key, const char *value)
{
    lmpi_info *i;
    lmpi_status st = keyed(h, key, &i);
    if (st != LMPI_OK)
        return st;
    if (i == &env_info) {
        lmpi_err_detail("MPI_INFO_ENV cannot be changed");
        return LMPI_ERR_INFO;
    }
    if (!value || strlen(value) >= MPI_MAX_INFO_VAL) {
        lmpi_err_detail(value ? "value longer than MPI_MAX_INFO_VAL" : "value is NULL");
        return LMPI_ERR_INFO_VALUE;
    }
    return lmpi_info_put(i, key, value);
}

lmpi_status lmpi_impl_Info_delete(MPI_Info h, const char *key)
{
    lmpi_info *i;
    lmpi_status st = keyed(h, key, &i);
    if (st != LMPI_OK)
        return st;
    for (lmpi_info_entry **p = &i->head; *p; p = &(*p)->next)
        if (strcmp((*p)->key, key) == 0) {
            lmpi_info_entry *e = *p;
            *p = e->next;
            lmpi_free(e->key);
            lmpi_free(e->value);
            lmpi_free(e);
            i->nkeys--;
            return LMPI_OK;
        }
    lmpi_err_detail("key \"%s\" is not in the info object", key);
    return LMPI_ERR_INFO_NOKEY;
}

lmpi_status lmpi_impl_Info_dup(MPI_Info h, MPI_Info *newinfo)
{
    lmpi_info *i;
    lmpi_status st = need(h, &i);
    if (st != LMPI_OK)
        return st;
    lmpi_info *n = lmpi_info_copy(i);
    if (!n)
        return LMPI_ERR_NO_MEM;
    *newinfo = (MPI_Info)n;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Info_free(MPI_Info *h)
{
    lmpi_info *i;
    lmpi_status st = need(*h, &i);
    if (st != LMPI_OK)
        return st;
    if (i == &env_info) {
        lmpi_err_detail("MPI_INFO_ENV cannot be freed");
        return LMPI_ERR_INFO;
    }
    lmpi_info_destroy(i);
    *h = MPI_INFO_NULL;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Info_get_nkeys(MPI_Info h, int *nkeys)
{
    lmpi_info *i;
    lmpi_status st = need(h, &i);
    if (st == LMPI_OK)
        *nkeys = i->nkeys;
    return st;
}

lmpi_status lmpi_impl_Info_get_nthkey(MPI_Info h, int n, char *key)
{
    lmpi_info *i;
    lmpi_status st = need(h, &i);
    if (st != LMPI_OK)
        return st;
    if (n < 0 || n >= i->nkeys) {
        lmpi_err_detail("n %d but the info object has %d keys", n, i->nkeys);
        return LMPI_ERR_ARG;
    }
    if (!key) {
        lmpi_err_detail("key is NULL");
        return LMPI_ERR_ARG;
    }
    lmpi_info_entry *e = i->head;
    while (n--)
        e = e->next;
    strcpy(key, e->key);
    return LMPI_OK;
}

/* MPI_Info_get_string: *buflen in = room, out = length + 1; the value is
 * truncated to the room given. */
lmpi_status lmpi_impl_Info_get_string(MPI_Info h, const char *key, int *buflen, char *value, int *flag)
{
    lmpi_info *i;
    lmpi_status st = keyed(h, key, &i);
    if (st != LMPI_OK)
        return st;
    const char *v = lmpi_info_value(i, key);
    *flag = v != NULL;
    if (!v)
        return LMPI_OK;
    int room = *buflen;
    int len = (int)strlen(v);
    if (room > 0 && value) {
        int n = len < room - 1 ? len : room - 1;
        memcpy(value, v, (size_t)n);
        value[n] = '\0';
    }
    *buflen = len + 1;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Info_get(MPI_Info h, const char *key, int valuelen, char *value, int *flag)
{
    lmpi_info *i;
    lmpi_status st = keyed(h, key, &i);
    if (st != LMPI_OK)
        return st;
    if (valuelen < 0) {
        lmpi_err_detail("valuelen %d is negative", valuelen);
        return LMPI_ERR_ARG;
    }
    const char *v = lmpi_info_value(i, key);
    *flag = v != NULL;
    if (v && value) {
        int len = (int)strlen(v), n = len < valuelen ? len : valuelen;
        memcpy(value, v, (size_t)n);
        value[n] = '\0';
    }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Info_get_valuelen(MPI_Info h, const char *key, int *valuelen, int *flag)
{
    lmpi_info *i;
    lmpi_status st = keyed(h, key, &i);
    if (st != LMPI_OK)
        return st;
    const char *v = lmpi_info_value(i, key);
    *flag = v != NULL;
    if (v)
        *valuelen = (int)strlen(v);
    return LMPI_OK;
}
