/* leanmpi_info: version, build options, the configuration table and which MPI
 * functions are implemented.
 *   leanmpi_info                 everything, readable
 *   leanmpi_info --config        the LMPI_* variables with defaults and current values
 *   leanmpi_info --config-markdown   docs/env.md (generated from the table)
 *   leanmpi_info --functions     every MPI function: implemented or unsupported, and
 *                                its Fortran bindings (mpif.h, `use mpi`, `use mpi_f08`) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fortran/gen/fortran_procs.h"
#include "runtime/config.h"
#include "runtime/lmpi.h"

#ifndef LMPI_BUILD_TYPE
#define LMPI_BUILD_TYPE "unknown"
#endif

static void print_config(void)
{
    lmpi_config_load();
    printf("Configuration (environment variables):\n");
    for (int i = 0; i < lmpi_config_count; i++) {
        const lmpi_config_entry *e = &lmpi_config_entries[i];
        const char *cur = getenv(e->env);
        printf("  %-24s %-6s default %-8s%s%s\n", e->env, e->type, e->def[0] ? e->def : "\"\"",
               cur ? " current " : "", cur ? cur : "");
        printf("      %s\n", e->doc);
    }
}

static void print_markdown(void)
{
    printf("# LeanMPI environment variables\n\n");
    printf("Generated from `src/runtime/config_table.h` by `leanmpi_info --config-markdown`;\n");
    printf("edit the table, not this file.\n\n");
    printf("| Variable | Type | Default | Description |\n|---|---|---|---|\n");
    for (int i = 0; i < lmpi_config_count; i++) {
        const lmpi_config_entry *e = &lmpi_config_entries[i];
        printf("| `%s` | %s | `%s` | %s |\n", e->env, e->type, e->def, e->doc);
    }
}

/* The Fortran column: the interfaces that have the procedure. */
static const char *fortran_column(const char *name, int *fortran, int *c_only)
{
    static char col[48];
    int where = -1;
    for (const struct lmpi_fortran_proc *p = lmpi_fortran_procs; p->name; p++)
        if (!strcmp(p->name, name)) {
            where = p->where;
            break;
        }
    if (where == 8 || (where < 0 && !strncmp(name, "MPI_T_", 6))) {
        ++*c_only;
        return "C only (standard)";
    }
    if (where <= 0) {
        if (strlen(name) > 2 && !strcmp(name + strlen(name) - 2, "_c")) {
            ++*c_only; /* a large-count form the standard leaves to mpi_f08's generics, or kinds equal */
            return "C only (large count)";
        }
        return "NOT in Fortran";
    }
    ++*fortran;
    snprintf(col, sizeof col, "%s%s%s", where & 1 ? "mpif.h " : "", where & 2 ? "mpi " : "",
             where & 4 ? "mpi_f08" : "");
    return col;
}

static void print_functions(bool list)
{
    int total = 0, done = 0, fortran = 0, c_only = 0;
    if (list)
        printf("%-40s %-44s %s\n", "function", "C", "Fortran");
    for (const lmpi_function_entry *f = lmpi_functions; f->name; f++) {
        total++;
        if (f->impl)
            done++;
        const char *col = fortran_column(f->name, &fortran, &c_only);
        if (list)
            printf("%-40s %-44s %s\n", f->name, f->impl ? "implemented" : "unsupported (MPI_ERR_UNSUPPORTED_OPERATION)",
                   col);
    }
    printf("%d of %d MPI functions implemented; %d with Fortran bindings, %d C only, %d missing in Fortran%s\n",
           done, total, fortran, c_only, total - fortran - c_only,
           LMPI_FORTRAN_BUILT ? "" : " (this build has no Fortran library: no Fortran compiler)");
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--config")) {
        print_config();
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "--config-markdown")) {
        print_markdown();
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "--functions")) {
        print_functions(true);
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "usage: leanmpi_info [--config | --config-markdown | --functions]\n");
        return 1;
    }
    printf("LeanMPI %s\n", LEANMPI_VERSION);
    printf("  MPI version:        %d.%d (standard ABI %d.%d, libmpi_abi.so.1)\n", MPI_VERSION, MPI_SUBVERSION,
           MPI_ABI_VERSION, MPI_ABI_SUBVERSION);
    printf("  build type:         %s\n", LMPI_BUILD_TYPE);
    printf("  argument checks:    %s\n", LMPI_ARG_CHECKS ? "on" : "off");
    printf("  transports:         shm (single transport: direct calls)\n");
    printf("  thread levels:      single, funneled, serialized, multiple (global lock only under multiple)\n");
    printf("  ");
    print_functions(false);
    printf("\n");
    print_config();
    return 0;
}
