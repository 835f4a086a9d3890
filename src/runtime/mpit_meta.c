/* MPI_T's descriptive side: categories that group the control and
 * performance variables by module, the time source events would be stamped
 * with, and the (empty) lists of enumerations and events.  No LeanMPI
 * variable is enum-typed and no event is raised yet, so those queries
 * answer with the standard's "invalid index/handle" errors, as an MPI
 * without them must. */
#include <string.h>
#include <strings.h>
#include <time.h>

#include "binding/gen/impl.h"
#include "runtime/config.h"
#include "runtime/info.h"
#include "runtime/mpit.h"

typedef struct {
    const char *name, *desc;
    const char *cvar_prefix[3]; /* LMPI_* names */
    const char *pvar_prefix[3]; /* lmpi_* names */
} category;

/* The last category takes every variable the others do not. */
static const category categories[] = {
    {"lmpi_memory", "memory accounting per category", {"LMPI_MEMORY"}, {"lmpi_mem_"}},
    {"lmpi_shm", "the shared-memory transport", {"LMPI_SHM_"}, {NULL}},
    {"lmpi_match", "message matching", {"LMPI_MATCH"}, {"lmpi_match_", "lmpi_posted_", "lmpi_unexpected_"}},
    {"lmpi_comm", "communicators, rank maps and nodes", {"LMPI_RANKMAP", "LMPI_NODE_"}, {"lmpi_comms", "lmpi_rankmap"}},
    {"lmpi_coll", "collective algorithms", {"LMPI_COLL_"}, {"lmpi_coll_"}},
    {"lmpi_rma", "one-sided communication: strategies, operations, lock waits", {"LMPI_RMA_"}, {"lmpi_rma_"}},
    {"lmpi_runtime", "everything else: errors, threads, progress", {NULL}, {NULL}},
};
#define N_CATEGORIES ((int)(sizeof(categories) / sizeof(categories[0])))

static bool has_prefix(const char *const *prefixes, const char *name)
{
    for (int i = 0; i < 3 && prefixes[i]; i++)
        if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
            return true;
    return false;
}

static int category_of(const char *name, bool cvar)
{
    for (int c = 0; c < N_CATEGORIES - 1; c++)
        if (has_prefix(cvar ? categories[c].cvar_prefix : categories[c].pvar_prefix, name))
            return c;
    return N_CATEGORIES - 1;
}

/* Fills indices[0..len) with category c's variables; returns how many it has. */
static int members(int c, bool cvar, int len, int indices[])
{
    int n = 0, total = cvar ? lmpi_config_count : lmpi_mpit_pvar_count();
    for (int i = 0; i < total; i++)
        if (category_of(cvar ? lmpi_config_entries[i].env : lmpi_mpit_pvar_name(i), cvar) == c) {
            if (indices && n < len)
                indices[n] = i;
            n++;
        }
    return n;
}

static lmpi_status category_arg(int c)
{
    lmpi_status st = lmpi_mpit_need_init();
    if (st == LMPI_OK && (c < 0 || c >= N_CATEGORIES))
        return LMPI_T_ERR_INVALID_INDEX;
    return st;
}

lmpi_status lmpi_impl_T_category_get_num(int *num_cat)
{
    lmpi_status st = lmpi_mpit_need_init();
    if (st == LMPI_OK)
        *num_cat = N_CATEGORIES;
    return st;
}

lmpi_status lmpi_impl_T_category_get_info(int c, char *name, int *name_len, char *desc, int *desc_len, int *num_cvars,
                                          int *num_pvars, int *num_categories)
{
    lmpi_status st = category_arg(c);
    if (st != LMPI_OK)
        return st;
    lmpi_mpit_copy_name(categories[c].name, name, name_len);
    lmpi_mpit_copy_name(categories[c].desc, desc, desc_len);
    if (num_cvars)
        *num_cvars = members(c, true, 0, NULL);
    if (num_pvars)
        *num_pvars = members(c, false, 0, NULL);
    if (num_categories)
        *num_categories = 0;
    return LMPI_OK;
}

lmpi_status lmpi_impl_T_category_get_index(const char *name, int *cat_index)
{
    lmpi_status st = lmpi_mpit_need_init();
    if (st != LMPI_OK)
        return st;
    for (int c = 0; name && c < N_CATEGORIES; c++)
        if (!strcmp(categories[c].name, name)) {
            *cat_index = c;
            return LMPI_OK;
        }
    return LMPI_T_ERR_INVALID_NAME;
}

static lmpi_status list(int c, int len, int indices[], bool cvar)
{
    lmpi_status st = category_arg(c);
    if (st == LMPI_OK && len > 0 && !indices)
        return LMPI_T_ERR_INVALID;
    if (st == LMPI_OK)
        members(c, cvar, len, indices);
    return st;
}

lmpi_status lmpi_impl_T_category_get_cvars(int c, int len, int indices[]) { return list(c, len, indices, true); }
lmpi_status lmpi_impl_T_category_get_pvars(int c, int len, int indices[]) { return list(c, len, indices, false); }

/* Categories hold no subcategories and no events. */
lmpi_status lmpi_impl_T_category_get_categories(int c, int len, int indices[])
{
    (void)len, (void)indices;
    return category_arg(c);
}

lmpi_status lmpi_impl_T_category_get_events(int c, int len, int indices[])
{
    (void)len, (void)indices;
    return category_arg(c);
}

lmpi_status lmpi_impl_T_category_get_num_events(int c, int *num_events)
{
    lmpi_status st = category_arg(c);
    if (st == LMPI_OK)
        *num_events = 0;
    return st;
}

/* The set of variables and categories never changes while a process runs. */
lmpi_status lmpi_impl_T_category_changed(int *update_number)
{
    lmpi_status st = lmpi_mpit_need_init();
    if (st == LMPI_OK)
        *update_number = 0;
    return st;
}

/* ---- enumerations: no variable is enum-typed --------------------------------- */
lmpi_status lmpi_impl_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    (void)enumtype, (void)num, (void)name, (void)name_len;
    lmpi_status st = lmpi_mpit_need_init();
    return st != LMPI_OK ? st : LMPI_T_ERR_INVALID_HANDLE;
}

lmpi_status lmpi_impl_T_enum_get_item(MPI_T_enum enumtype, int indx, int *value, char *name, int *name_len)
{
    (void)enumtype, (void)indx, (void)value, (void)name, (void)name_len;
    lmpi_status st = lmpi_mpit_need_init();
    return st != LMPI_OK ? st : LMPI_T_ERR_INVALID_HANDLE;
}

/* ---- events: none is raised yet ---------------------------------------------- */
lmpi_status lmpi_impl_T_event_get_num(int *num_events)
{
    lmpi_status st = lmpi_mpit_need_init();
    if (st == LMPI_OK)
        *num_events = 0;
    return st;
}

lmpi_status lmpi_impl_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                                       MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                                       int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                                       int *desc_len, int *bind)
{
    (void)event_index, (void)name, (void)name_len, (void)verbosity, (void)array_of_datatypes;
    (void)array_of_displacements, (void)num_elements, (void)enumtype, (void)info, (void)desc, (void)desc_len;
    (void)bind;
    lmpi_status st = lmpi_mpit_need_init();
    return st != LMPI_OK ? st : LMPI_T_ERR_INVALID_INDEX;
}

lmpi_status lmpi_impl_T_event_get_index(const char *name, int *event_index)
{
    (void)name, (void)event_index;
    lmpi_status st = lmpi_mpit_need_init();
    return st != LMPI_OK ? st : LMPI_T_ERR_INVALID_NAME;
}

lmpi_status lmpi_impl_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                                           MPI_T_event_registration *event_registration)
{
    (void)event_index, (void)obj_handle, (void)info, (void)event_registration;
    lmpi_status st = lmpi_mpit_need_init();
    return st != LMPI_OK ? st : LMPI_T_ERR_INVALID_INDEX;
}

/* With no event there is no registration, no instance: every handle is invalid. */
#define NO_HANDLE_FN(call, ...)                                             \
    lmpi_status lmpi_impl_T_##call(__VA_ARGS__)                             \
    {                                                                       \
        lmpi_status st = lmpi_mpit_need_init();                             \
        return st != LMPI_OK ? st : LMPI_T_ERR_INVALID_HANDLE;              \
    }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
NO_HANDLE_FN(event_handle_free, MPI_T_event_registration r, void *user_data, MPI_T_event_free_cb_function fn)
NO_HANDLE_FN(event_handle_get_info, MPI_T_event_registration r, MPI_Info *info_used)
NO_HANDLE_FN(event_handle_set_info, MPI_T_event_registration r, MPI_Info info)
NO_HANDLE_FN(event_register_callback, MPI_T_event_registration r, MPI_T_cb_safety s, MPI_Info info, void *user_data,
             MPI_T_event_cb_function fn)
NO_HANDLE_FN(event_callback_get_info, MPI_T_event_registration r, MPI_T_cb_safety s, MPI_Info *info_used)
NO_HANDLE_FN(event_callback_set_info, MPI_T_event_registration r, MPI_T_cb_safety s, MPI_Info info)
NO_HANDLE_FN(event_set_dropped_handler, MPI_T_event_registration r, MPI_T_event_dropped_cb_function fn)
NO_HANDLE_FN(event_read, MPI_T_event_instance e, int element_index, void *buffer)
NO_HANDLE_FN(event_copy, MPI_T_event_instance e, void *buffer)
NO_HANDLE_FN(event_get_timestamp, MPI_T_event_instance e, MPI_Count *event_timestamp)
NO_HANDLE_FN(event_get_source, MPI_T_event_instance e, int *source_index)
#pragma GCC diagnostic pop

/* ---- sources: one, the monotonic clock behind MPI_Wtime, in nanoseconds ---- */
static MPI_Count now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (MPI_Count)t.tv_sec * 1000000000 + t.tv_nsec;
}

lmpi_status lmpi_impl_T_source_get_num(int *num_sources)
{
    lmpi_status st = lmpi_mpit_need_init();
    if (st == LMPI_OK)
        *num_sources = 1;
    return st;
}

lmpi_status lmpi_impl_T_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                                        MPI_T_source_order *ordering, MPI_Count *ticks_per_second,
                                        MPI_Count *max_ticks, MPI_Info *info)
{
    lmpi_status st = lmpi_mpit_need_init();
    if (st != LMPI_OK)
        return st;
    if (source_index != 0)
        return LMPI_T_ERR_INVALID_INDEX;
    lmpi_mpit_copy_name("lmpi_monotonic_clock", name, name_len);
    lmpi_mpit_copy_name("CLOCK_MONOTONIC of this process, in nanoseconds (the clock of MPI_Wtime)", desc, desc_len);
    if (ordering)
        *ordering = MPI_T_SOURCE_ORDERED;
    if (ticks_per_second)
        *ticks_per_second = 1000000000;
    if (max_ticks)
        *max_ticks = INT64_MAX;
    if (info) {
        lmpi_info *i = lmpi_info_new();
        if (!i)
            return LMPI_ERR_NO_MEM;
        *info = (MPI_Info)i;
    }
    return LMPI_OK;
}

lmpi_status lmpi_impl_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    lmpi_status st = lmpi_mpit_need_init();
    if (st != LMPI_OK)
        return st;
    if (source_index != 0)
        return LMPI_T_ERR_INVALID_INDEX;
    *timestamp = now_ns();
    return LMPI_OK;
}
