#include <stdlib.h>
#include <string.h>

#include "pmi/pmi.h"
#include "unit.h"

int main(void)
{
    int node[8];
    CHECK_EQ(lmpi_pmi_parse_mapping("(vector,(0,1,4))", 4, node), 0);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(node[i], 0);
    CHECK_EQ(lmpi_pmi_parse_mapping("(vector,(0,2,3),(2,1,2))", 8, node), 0);
    int expect[8] = {0, 0, 0, 1, 1, 1, 2, 2};
    for (int i = 0; i < 8; i++)
        CHECK_EQ(node[i], expect[i]);
    /* a cyclic layout given as one cycle */
    CHECK_EQ(lmpi_pmi_parse_mapping("(vector,(0,2,1))", 6, node), 0);
    CHECK_EQ(node[4], 0);
    CHECK_EQ(node[5], 1);
    CHECK_EQ(lmpi_pmi_parse_mapping("garbage", 4, node), -1);

    /* singleton: no PMI_FD, a key-value space of its own */
    unsetenv("PMI_FD");
    lmpi_pmi_info info;
    char why[256];
    CHECK_EQ(lmpi_pmi_init(&info, why, sizeof(why)), 0);
    CHECK_EQ(info.singleton, 1);
    CHECK_EQ(info.size, 1);
    CHECK_EQ(lmpi_pmi_put("k", "v1"), 0);
    char v[16];
    CHECK_EQ(lmpi_pmi_get("k", v, sizeof(v)), 0);
    CHECK(strcmp(v, "v1") == 0);
    CHECK_EQ(lmpi_pmi_get("missing", v, sizeof(v)), -1);
    CHECK_EQ(lmpi_pmi_barrier(), 0);
    CHECK_EQ(lmpi_pmi_finalize(), 0);
    return unit_finish("test_pmi");
}
