#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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
    /* hostile mappings: refused, never an overflow */
    CHECK_EQ(lmpi_pmi_parse_mapping("(vector,(2147483647,2147483647,2147483647))", 8, node), -1);
    CHECK_EQ(lmpi_pmi_parse_mapping("(vector,(-5,2,1))", 8, node), -1);
    CHECK_EQ(lmpi_pmi_parse_mapping("(vector,(0,1,4)", 8, node), 0); /* truncated: the cycle repeats */
    CHECK_EQ(lmpi_pmi_parse_mapping("(vector,(0,1,", 8, node), -1);

    /* integers from the environment: decimal, in range, nothing after */
    int n;
    CHECK_EQ(lmpi_pmi_parse_int("17", 0, 20, &n), 0);
    CHECK_EQ(n, 17);
    CHECK_EQ(lmpi_pmi_parse_int("21", 0, 20, &n), -1);
    CHECK_EQ(lmpi_pmi_parse_int("-1", 0, 20, &n), -1);
    CHECK_EQ(lmpi_pmi_parse_int("3x", 0, 20, &n), -1);
    CHECK_EQ(lmpi_pmi_parse_int("", 0, 20, &n), -1);
    CHECK_EQ(lmpi_pmi_parse_int(" 3", 0, 20, &n), -1);
    CHECK_EQ(lmpi_pmi_parse_int("99999999999999999999", 0, 2147483647L, &n), -1);

    /* launcher values out of range fail MPI_Init with the value named,
     * before a word goes to the socket */
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    char fdtext[16], why0[256];
    snprintf(fdtext, sizeof(fdtext), "%d", sv[0]);
    lmpi_pmi_info bad;
    setenv("PMI_FD", "not-a-number", 1);
    CHECK_EQ(lmpi_pmi_init(&bad, why0, sizeof(why0)), -1);
    CHECK(strstr(why0, "PMI_FD=not-a-number") != NULL);
    FILE *devnull = fopen("/dev/null", "r"); /* a descriptor, but not a socket */
    char nulltext[16];
    snprintf(nulltext, sizeof(nulltext), "%d", fileno(devnull));
    setenv("PMI_FD", nulltext, 1);
    CHECK_EQ(lmpi_pmi_init(&bad, why0, sizeof(why0)), -1);
    CHECK(strstr(why0, "not the file descriptor of a socket") != NULL);
    fclose(devnull);
    setenv("PMI_FD", fdtext, 1);
    setenv("PMI_SIZE", "4", 1);
    setenv("PMI_RANK", "1000000", 1);
    CHECK_EQ(lmpi_pmi_init(&bad, why0, sizeof(why0)), -1);
    CHECK(strstr(why0, "PMI_RANK=1000000") != NULL);
    setenv("PMI_SIZE", "0", 1);
    CHECK_EQ(lmpi_pmi_init(&bad, why0, sizeof(why0)), -1);
    CHECK(strstr(why0, "PMI_SIZE=0") != NULL);
    unsetenv("PMI_SIZE");
    unsetenv("PMI_RANK");
    close(sv[0]);
    close(sv[1]);

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
