#include <stdlib.h>
#include <string.h>

#include "runtime/config.h"
#include "unit.h"

int main(void)
{
    int64_t v;
    CHECK_EQ(lmpi_config_parse("BOOL", "1", &v), 0);
    CHECK_EQ(v, 1);
    CHECK_EQ(lmpi_config_parse("BOOL", "off", &v), 0);
    CHECK_EQ(v, 0);
    CHECK_EQ(lmpi_config_parse("BOOL", "maybe", &v), -1);
    CHECK_EQ(lmpi_config_parse("INT", "-12", &v), 0);
    CHECK_EQ(v, -12);
    CHECK_EQ(lmpi_config_parse("INT", "12x", &v), -1);
    CHECK_EQ(lmpi_config_parse("SIZE", "16k", &v), 0);
    CHECK_EQ(v, 16384);
    CHECK_EQ(lmpi_config_parse("SIZE", "2M", &v), 0);
    CHECK_EQ(v, 2 << 20);
    CHECK_EQ(lmpi_config_parse("SIZE", "1g", &v), 0);
    CHECK_EQ(v, 1 << 30);
    CHECK_EQ(lmpi_config_parse("SIZE", "-5", &v), -1);

    /* defaults, then environment overrides; a malformed value keeps the default */
    unsetenv("LMPI_SHM_EAGER_MAX");
    unsetenv("LMPI_MEMORY_REPORT");
    CHECK_EQ(lmpi_config_load(), 0);
    CHECK_EQ(lmpi_config.shm_eager_max, 16384);
    CHECK_EQ(lmpi_config.memory_report, 0);
    setenv("LMPI_SHM_EAGER_MAX", "4k", 1);
    setenv("LMPI_MEMORY_REPORT", "yes", 1);
    setenv("LMPI_SPIN_TIME", "lots", 1);
    CHECK_EQ(lmpi_config_load(), 1);
    CHECK_EQ(lmpi_config.shm_eager_max, 4096);
    CHECK_EQ(lmpi_config.memory_report, 1);
    CHECK_EQ(lmpi_config.spin_time, 50);

    /* every entry is documented and named LMPI_* */
    for (int i = 0; i < lmpi_config_count; i++) {
        CHECK(strncmp(lmpi_config_entries[i].env, "LMPI_", 5) == 0);
        CHECK(strlen(lmpi_config_entries[i].doc) > 20);
        if (strcmp(lmpi_config_entries[i].type, "STRING"))
            CHECK_EQ(lmpi_config_parse(lmpi_config_entries[i].type, lmpi_config_entries[i].def, &v), 0);
    }
    return unit_finish("test_config");
}
