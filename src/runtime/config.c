#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "runtime/config.h"

lmpi_config_values lmpi_config;

const lmpi_config_entry lmpi_config_entries[] = {
#define LMPI_CFG_ENTRY(field, env, type, def, doc) {env, #type, def, doc},
    LMPI_CONFIG_TABLE(LMPI_CFG_ENTRY)
#undef LMPI_CFG_ENTRY
};
const int lmpi_config_count = (int)(sizeof(lmpi_config_entries) / sizeof(lmpi_config_entries[0]));

int lmpi_config_parse(const char *type, const char *text, int64_t *num)
{
    if (!strcmp(type, "BOOL")) {
        if (!strcmp(text, "1") || !strcasecmp(text, "yes") || !strcasecmp(text, "true") || !strcasecmp(text, "on"))
            *num = 1;
        else if (!strcmp(text, "0") || !strcasecmp(text, "no") || !strcasecmp(text, "false") || !strcasecmp(text, "off"))
            *num = 0;
        else
            return -1;
        return 0;
    }
    char *end;
    errno = 0;
    if (!strcmp(type, "FLOAT")) {
        double d = strtod(text, &end);
        if (end == text || *end != '\0')
            return -1;
        *num = (int64_t)d;
        return 0;
    }
    long long v = strtoll(text, &end, 0);
    if (errno || end == text)
        return -1;
    if (!strcmp(type, "SIZE")) {
        switch (tolower((unsigned char)*end)) {
        case 'k': v <<= 10; end++; break;
        case 'm': v <<= 20; end++; break;
        case 'g': v <<= 30; end++; break;
        default: break;
        }
        if (v < 0)
            return -1;
    }
    if (*end != '\0')
        return -1;
    *num = v;
    return 0;
}

static int load_one(const char *env, const char *type, const char *def, void *field)
{
    const char *text = getenv(env);
    int bad = 0;
    if (!strcmp(type, "STRING")) {
        *(const char **)field = text ? text : def;
        return 0;
    }
    if (!strcmp(type, "FLOAT")) {
        char *end = NULL;
        double d = text ? strtod(text, &end) : 0;
        if (text && (end == text || *end != '\0')) {
            fprintf(stderr, "LeanMPI: ignoring %s=%s (not a number); using %s\n", env, text, def);
            bad = 1;
            text = NULL;
        }
        *(double *)field = text ? d : strtod(def, NULL);
        return bad;
    }
    int64_t v = 0;
    if (text && lmpi_config_parse(type, text, &v) != 0) {
        fprintf(stderr, "LeanMPI: ignoring %s=%s (not a valid %s); using %s\n", env, text, type, def);
        bad = 1;
        text = NULL;
    }
    if (!text)
        lmpi_config_parse(type, def, &v);
    if (!strcmp(type, "BOOL"))
        *(int *)field = (int)v;
    else
        *(int64_t *)field = v;
    return bad;
}

static bool loaded;

void lmpi_config_ensure_loaded(void)
{
    if (!loaded)
        lmpi_config_load();
}

int lmpi_config_load(void)
{
    int bad = 0;
    loaded = true;
#define LMPI_CFG_LOAD(field, env, type, def, doc) bad += load_one(env, #type, def, &lmpi_config.field);
    LMPI_CONFIG_TABLE(LMPI_CFG_LOAD)
#undef LMPI_CFG_LOAD
    return bad;
}
