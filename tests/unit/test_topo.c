/* The mapping model (src/topo): description parsing, patterns, orders,
 * routing on small tori/meshes/trees against hand-computed link loads, and
 * the paper's worked example. */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "topo/mapping.h"
#include "unit.h"

#define CHECK_NEAR(a, b)                                                                                  \
    do {                                                                                                  \
        double _a = (a), _b = (b);                                                                        \
        if (fabs(_a - _b) > 1e-9 * fmax(1, fabs(_b))) {                                                   \
            fprintf(stderr, "%s:%d: %s == %.10g, expected %.10g\n", __FILE__, __LINE__, #a, _a, _b);       \
            unit_failures++;                                                                              \
        }                                                                                                 \
    } while (0)

static char errbuf[LMPI_NET_ERRLEN];

static void net_ok(const char *spec, int cores, lmpi_net *net)
{
    int rc = lmpi_net_parse(spec, cores, net, errbuf, sizeof(errbuf));
    if (rc)
        fprintf(stderr, "unexpected error for %s: %s\n", spec, errbuf);
    CHECK_EQ(rc, 0);
}

/* Parse TEXT as a description; expect failure with NEEDLE in the message. */
static void text_fails(const char *text, const char *needle)
{
    lmpi_net net;
    int rc = lmpi_net_parse_text(text, "net.conf", 0, &net, errbuf, sizeof(errbuf));
    CHECK_EQ(rc, -1);
    if (rc == 0)
        lmpi_net_free(&net);
    else if (!strstr(errbuf, needle)) {
        fprintf(stderr, "message '%s' lacks '%s'\n", errbuf, needle);
        unit_failures++;
    }
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void test_parsing(void)
{
    lmpi_net net;
    net_ok("torus:8x16x32", 4, &net);
    CHECK_EQ(net.kind, LMPI_NET_TORUS);
    CHECK_EQ(net.nodes, 4096);
    CHECK_EQ(net.stride[2], 128);
    CHECK_EQ(lmpi_net_coord(&net, 8 + 3 * 128 + 5, 0), 5);
    CHECK_EQ(lmpi_net_coord(&net, 8 + 3 * 128 + 5, 1), 1);
    CHECK_EQ(lmpi_net_coord(&net, 8 + 3 * 128 + 5, 2), 3);
    char name[64];
    lmpi_net_node_name(&net, 8 + 3 * 128 + 5, name, sizeof(name));
    CHECK(!strcmp(name, "x5y1z3"));
    lmpi_net_node_coords(&net, 8 + 3 * 128 + 5, name, sizeof(name));
    CHECK(!strcmp(name, "5,1,3"));
    lmpi_net_free(&net);

    CHECK_EQ(lmpi_net_parse("torus:8x0", 4, &net, errbuf, sizeof(errbuf)), -1);
    CHECK_EQ(lmpi_net_parse("torus:8x16", 0, &net, errbuf, sizeof(errbuf)), -1);
    CHECK(strstr(errbuf, "--cores") != NULL);
    CHECK_EQ(lmpi_net_parse("/nonexistent/net.conf", 4, &net, errbuf, sizeof(errbuf)), -1);

    /* a Slurm-style tree; host lists with ranges and zero padding */
    const char *tree = "# two leaf switches under one spine\n"
                       "cores 2\n"
                       "SwitchName=s0 Nodes=n[00-01],login\n"
                       "SwitchName=s1 Nodes=n[02-03,7] LinkSpeed=100\n"
                       "SwitchName=top Switches=s[0-1]\n";
    CHECK_EQ(lmpi_net_parse_text(tree, "tree.conf", 0, &net, errbuf, sizeof(errbuf)), 0);
    CHECK_EQ(net.kind, LMPI_NET_TREE);
    CHECK_EQ(net.nodes, 6);
    CHECK_EQ(net.cores, 2);
    CHECK(!strcmp(net.names[2], "login"));
    CHECK(!strcmp(net.names[5], "n7"));
    CHECK_EQ(net.parent[2], 6);       /* login under s0 */
    CHECK_EQ(net.parent[5], 7);       /* n7 under s1 */
    CHECK_EQ(net.parent[6], 8);       /* s0 under top */
    CHECK_EQ(net.parent[8], -1);
    CHECK_EQ(net.depth[0], 2);
    lmpi_net_node_coords(&net, 5, name, sizeof(name));
    CHECK(!strcmp(name, "top,s1"));
    lmpi_net_free(&net);

    /* errors name the line and the problem */
    text_fails("torus 4x4\ncores 2\nbogus 3\n", "net.conf:3: unknown line 'bogus'");
    text_fails("torus 4x4\nmesh 2x2\n", "net.conf:2: a second network shape");
    text_fails("nodes 10\ntorus 4x4\ncores 1\n", "net.conf:1: nodes 10 does not match");
    text_fails("torus 4xq\ncores 1\n", "net.conf:1: torus needs dimensions");
    text_fails("cores 2\nSwitchName=s0 Nodes=a,b\nSwitchName=s1 Nodes=b\nSwitchName=t Switches=s0,s1\n",
               "node b is attached to two switches");
    text_fails("cores 2\nSwitchName=s0 Nodes=a\nSwitchName=t Switches=s0,s9\n", "net.conf:3: switch s9 is not declared");
    text_fails("cores 2\nSwitchName=s0 Nodes=a\nSwitchName=s1 Nodes=b\n", "have no common parent");
    text_fails("cores 2\nSwitchName=s0 Nodes=n[3-1]\n", "net.conf:2: bad range");
    text_fails("cores 2\nSwitchName=s0 Nodes=a Color=red\n", "net.conf:2: unknown key 'Color=red'");
    text_fails("torus 2x2\n", "cores per node unknown");
    text_fails("# nothing\n", "no network described");

    net_ok("flat:4", 2, &net);
    CHECK(net.flat);
    CHECK_EQ(net.nodes, 4);
    lmpi_net_free(&net);
}

static void test_patterns(void)
{
    lmpi_pattern p;
    int64_t nb[64];
    double w[64];
    CHECK_EQ(lmpi_pattern_parse("2d-nn:3x3:star", 10, &p, errbuf, sizeof(errbuf)), 0);
    CHECK_EQ(p.nranks, 9);
    CHECK_EQ(lmpi_pattern_neighbors(&p, 4, nb, w), 8);
    CHECK_EQ(lmpi_pattern_neighbors(&p, 0, nb, w), 3);
    CHECK_EQ(nb[0], 1);
    CHECK_EQ(nb[1], 3);
    CHECK_EQ(nb[2], 4);
    CHECK_NEAR(w[0], 10);
    CHECK_EQ(lmpi_pattern_parse("2d-nn:3x3:box", 10, &p, errbuf, sizeof(errbuf)), 0);
    CHECK_EQ(lmpi_pattern_neighbors(&p, 4, nb, w), 4);
    CHECK_EQ(lmpi_pattern_parse("2d-nn:3x3:star:periodic", 10, &p, errbuf, sizeof(errbuf)), 0);
    CHECK_EQ(lmpi_pattern_neighbors(&p, 0, nb, w), 8);
    CHECK_EQ(lmpi_pattern_parse("2d-nn:2x4:box:periodic", 10, &p, errbuf, sizeof(errbuf)), 0);
    CHECK_EQ(lmpi_pattern_neighbors(&p, 0, nb, w), 3); /* up and down are the same rank */
    CHECK_EQ(lmpi_pattern_parse("3d-nn:3x3x3", 1, &p, errbuf, sizeof(errbuf)), 0);
    CHECK_EQ(lmpi_pattern_neighbors(&p, 13, nb, w), 26);
    CHECK_EQ(lmpi_pattern_parse("1d-nn:5", 1, &p, errbuf, sizeof(errbuf)), 0);
    CHECK_EQ(lmpi_pattern_neighbors(&p, 4, nb, w), 1);
    CHECK_EQ(lmpi_pattern_parse("fft:4x4", 1, &p, errbuf, sizeof(errbuf)), 0);
    CHECK_EQ(lmpi_pattern_neighbors(&p, 5, nb, w), 6);
    CHECK_EQ(lmpi_pattern_parse("diagonal:4x4", 1, &p, errbuf, sizeof(errbuf)), 0);
    CHECK_EQ(lmpi_pattern_neighbors(&p, 0, nb, w), 3);
    CHECK_EQ(nb[0], 5);
    CHECK_EQ(nb[2], 15);
    CHECK_EQ(lmpi_pattern_neighbors(&p, 5, nb, w), 5); /* (1,1): 3 on the diagonal, 2 on the anti-diagonal */

    CHECK_EQ(lmpi_pattern_parse("2d-nn:128", 1, &p, errbuf, sizeof(errbuf)), -1);
    CHECK(strstr(errbuf, "expected 2 grid sizes") != NULL);
    CHECK_EQ(lmpi_pattern_parse("ring:8", 1, &p, errbuf, sizeof(errbuf)), -1);
    CHECK_EQ(lmpi_pattern_parse("2d-nn:4x4:hex", 1, &p, errbuf, sizeof(errbuf)), -1);
    CHECK(strstr(errbuf, "unknown option 'hex'") != NULL);

    char path[] = "/tmp/lmpi_edgesXXXXXX";
    int fd = mkstemp(path);
    close(fd);
    write_file(path, "# a weighted graph\nranks 4\n0 1 100\n1 0\n2 3 5.5\n");
    CHECK_EQ(lmpi_pattern_parse("", 1, &p, errbuf, sizeof(errbuf)), -1);
    char spec[96];
    snprintf(spec, sizeof(spec), "edges:%s", path);
    CHECK_EQ(lmpi_pattern_parse(spec, 7, &p, errbuf, sizeof(errbuf)), 0);
    CHECK_EQ(p.nranks, 4);
    CHECK_EQ(lmpi_pattern_neighbors(&p, 1, nb, w), 1);
    CHECK_NEAR(w[0], 7);
    CHECK_EQ(lmpi_pattern_neighbors(&p, 2, nb, w), 1);
    CHECK_NEAR(w[0], 5.5);
    lmpi_pattern_free(&p);
    write_file(path, "0 1\n1 x\n");
    CHECK_EQ(lmpi_pattern_parse(spec, 7, &p, errbuf, sizeof(errbuf)), -1);
    CHECK(strstr(errbuf, ":2: expected 'src dst [bytes]'") != NULL);
    unlink(path);
}

static void test_orders(void)
{
    lmpi_net net;
    static lmpi_map_order o[LMPI_MAP_MAX_ORDERS];
    net_ok("torus:2x3x4", 2, &net);
    CHECK_EQ(lmpi_map_orders(&net, o), 24);
    CHECK(!strcmp(o[0].name, "TXYZ"));
    CHECK(!strcmp(o[23].name, "ZYXT"));
    lmpi_map_order one;
    CHECK_EQ(lmpi_map_parse_order(&net, "tzxy", &one, errbuf, sizeof(errbuf)), 0);
    CHECK(!strcmp(one.name, "TZXY"));
    CHECK_EQ(lmpi_map_parse_order(&net, "cyclic", &one, errbuf, sizeof(errbuf)), 0);
    CHECK(!strcmp(one.name, "XYZT"));
    CHECK_EQ(lmpi_map_parse_order(&net, "TXX", &one, errbuf, sizeof(errbuf)), -1);
    CHECK_EQ(lmpi_map_parse_order(&net, "TXYZW", &one, errbuf, sizeof(errbuf)), -1);
    int32_t node[48], core[48];
    /* XYZT: one rank per node first; rank 24 is the second core of node 0 */
    CHECK_EQ(lmpi_map_parse_order(&net, "XYZT", &one, errbuf, sizeof(errbuf)), 0);
    CHECK_EQ(lmpi_map_assign(&net, &one, 48, node, core, errbuf, sizeof(errbuf)), 0);
    CHECK_EQ(node[7], 7);
    CHECK_EQ(node[24], 0);
    CHECK_EQ(core[24], 1);
    /* ZTXY: Z fastest (stride 6), then the core */
    CHECK_EQ(lmpi_map_parse_order(&net, "ZTXY", &one, errbuf, sizeof(errbuf)), 0);
    CHECK_EQ(lmpi_map_assign(&net, &one, 48, node, core, errbuf, sizeof(errbuf)), 0);
    CHECK_EQ(node[1], 6);
    CHECK_EQ(node[4], 0);
    CHECK_EQ(core[4], 1);
    CHECK_EQ(node[8], 1);
    CHECK_EQ(lmpi_map_assign(&net, &one, 49, node, core, errbuf, sizeof(errbuf)), -1);
    lmpi_net_free(&net);

    /* tiles: a 4x4 grid in 2x2 blocks on a 2x2 torus of 4-core nodes */
    lmpi_pattern p;
    net_ok("torus:2x2", 4, &net);
    CHECK_EQ(lmpi_pattern_parse("2d-nn:4x4:box", 1, &p, errbuf, sizeof(errbuf)), 0);
    int nt = lmpi_map_tiled_orders(&net, &p, o);
    CHECK_EQ(nt, 2 * 2); /* 2x2 and 4x1 (1x4 is the order TXY), two walks each */
    CHECK(!strcmp(o[0].name, "2x2/XY")); /* 8 messages leave a 2x2 block, 10 a 4x1 */
    CHECK(!strcmp(o[1].name, "2x2/YX"));
    CHECK(!strcmp(o[2].name, "4x1/XY"));
    CHECK_EQ(lmpi_map_assign(&net, &o[0], 16, node, core, errbuf, sizeof(errbuf)), 0);
    CHECK_EQ(node[5], 0); /* (1,1) */
    CHECK_EQ(core[5], 3);
    CHECK_EQ(node[6], 1); /* (1,2): block (0,1), walked X first */
    CHECK_EQ(core[6], 2);
    CHECK_EQ(node[10], 3); /* (2,2) */
    CHECK_EQ(lmpi_map_assign(&net, &o[1], 16, node, core, errbuf, sizeof(errbuf)), 0);
    CHECK_EQ(node[6], 2); /* walked Y first */
    lmpi_pattern_free(&p);
    lmpi_net_free(&net);

    net_ok("flat:4", 2, &net);
    CHECK_EQ(lmpi_map_orders(&net, o), 2);
    CHECK_EQ(lmpi_map_parse_order(&net, "cyclic", &one, errbuf, sizeof(errbuf)), 0);
    CHECK_EQ(lmpi_map_assign(&net, &one, 8, node, core, errbuf, sizeof(errbuf)), 0);
    CHECK_EQ(node[5], 1);
    CHECK_EQ(core[5], 1);
    CHECK_EQ(lmpi_map_parse_order(&net, "TX", &one, errbuf, sizeof(errbuf)), -1);
    lmpi_net_free(&net);
}

/* A pattern from an edge list written to a temporary file. */
static void edges_pattern(const char *text, lmpi_pattern *p)
{
    char path[] = "/tmp/lmpi_edgesXXXXXX", spec[64];
    int fd = mkstemp(path);
    close(fd);
    write_file(path, text);
    snprintf(spec, sizeof(spec), "edges:%s", path);
    CHECK_EQ(lmpi_pattern_parse(spec, 100, p, errbuf, sizeof(errbuf)), 0);
    unlink(path);
}

/* load index of the link leaving NODE along D in direction S (0 +, 1 -) */
static int64_t L(const lmpi_net *net, int64_t node, int d, int s)
{
    return (d * 2 + s) * net->nodes + node;
}

static void test_routing(void)
{
    lmpi_net net;
    lmpi_pattern p;
    int32_t node_of[16];
    for (int i = 0; i < 16; i++)
        node_of[i] = i;

    /* Ring of 8, one core: 0->3 goes + over 3 links, 0->5 goes - (3 hops
     * through 7 and 6), 0->4 is a tie: + for small messages. */
    net_ok("torus:8", 1, &net);
    edges_pattern("ranks 8\n0 3\n0 5\n0 4\n", &p);
    double *ld = lmpi_map_loads(&net, &p, node_of, false);
    CHECK_NEAR(ld[L(&net, 0, 0, 0)], 2); /* 0->3 and 0->4 */
    CHECK_NEAR(ld[L(&net, 1, 0, 0)], 2);
    CHECK_NEAR(ld[L(&net, 2, 0, 0)], 2);
    CHECK_NEAR(ld[L(&net, 3, 0, 0)], 1); /* 0->4 only */
    CHECK_NEAR(ld[L(&net, 4, 0, 0)], 0);
    CHECK_NEAR(ld[L(&net, 0, 0, 1)], 1); /* 0->5 leaves 0 going - */
    CHECK_NEAR(ld[L(&net, 7, 0, 1)], 1);
    CHECK_NEAR(ld[L(&net, 6, 0, 1)], 1);
    CHECK_NEAR(ld[L(&net, 5, 0, 1)], 0);
    free(ld);
    /* large messages: the tie splits half each way */
    ld = lmpi_map_loads(&net, &p, node_of, true);
    CHECK_NEAR(ld[L(&net, 3, 0, 0)], 0.5);
    CHECK_NEAR(ld[L(&net, 0, 0, 0)], 1.5);
    CHECK_NEAR(ld[L(&net, 5, 0, 1)], 0.5); /* 0 -> 7 -> 6 -> 5 -> 4 */
    CHECK_NEAR(ld[L(&net, 4, 0, 1)], 0);
    CHECK_NEAR(ld[L(&net, 7, 0, 1)], 1.5);
    free(ld);
    lmpi_map_metrics m;
    CHECK_EQ(lmpi_map_evaluate(&net, &p, node_of, false, &m, errbuf, sizeof(errbuf)), 0);
    CHECK_NEAR(m.hop_bytes, 100 * (3 + 3 + 4));
    CHECK_EQ(m.max_dilation, 4);
    /* physical links: 0-1, 1-2, 2-3 carry 2; 3-4 one; 5-6, 6-7, 7-0 one each */
    CHECK_NEAR(m.max_contention, 2);
    CHECK_NEAR(m.avg_contention, (2 + 2 + 2 + 1 + 1 + 1 + 1) / 7.0);
    /* the paper's count for rank 0: 3 hops on 0-1, 1-2, 2-3 from 0->3, 4 from
     * 0->4: 7, doubled */
    CHECK_NEAR(m.paper_contention, 14);
    lmpi_pattern_free(&p);
    lmpi_net_free(&net);

    /* 4x4 torus, dimension-ordered: node 0 -> (1,2) = 9 takes +X from 0,
     * then the Y tie (2 of 4) the + way from (1,0) and (1,1). */
    net_ok("torus:4x4", 1, &net);
    edges_pattern("ranks 16\n0 9\n", &p);
    ld = lmpi_map_loads(&net, &p, node_of, false);
    double total = 0;
    for (int i = 0; i < 4 * 16; i++)
        total += ld[i];
    CHECK_NEAR(total, 3);
    CHECK_NEAR(ld[L(&net, 0, 0, 0)], 1);
    CHECK_NEAR(ld[L(&net, 1, 1, 0)], 1);
    CHECK_NEAR(ld[L(&net, 5, 1, 0)], 1);
    free(ld);
    lmpi_pattern_free(&p);
    lmpi_net_free(&net);

    /* 3x3 mesh, large message 0 -> (2,1) = node 5: the traffic splits at
     * every hop among the minimal next hops.
     *   (0,0): +X 1/2, +Y 1/2     (1,0): +X 1/4, +Y 1/4
     *   (0,1): +X 1/2             (1,1): +X 3/4       (2,0): +Y 1/4 */
    net_ok("mesh:3x3", 1, &net);
    edges_pattern("ranks 9\n0 5\n", &p);
    ld = lmpi_map_loads(&net, &p, node_of, true);
    CHECK_NEAR(ld[L(&net, 0, 0, 0)], 0.5);
    CHECK_NEAR(ld[L(&net, 0, 1, 0)], 0.5);
    CHECK_NEAR(ld[L(&net, 1, 0, 0)], 0.25);
    CHECK_NEAR(ld[L(&net, 1, 1, 0)], 0.25);
    CHECK_NEAR(ld[L(&net, 3, 0, 0)], 0.5);
    CHECK_NEAR(ld[L(&net, 4, 0, 0)], 0.75);
    CHECK_NEAR(ld[L(&net, 2, 1, 0)], 0.25);
    total = 0;
    for (int i = 0; i < 4 * 9; i++)
        total += ld[i];
    CHECK_NEAR(total, 3);
    free(ld);
    /* a mesh does not wrap: 2 -> 0 goes - twice */
    lmpi_pattern_free(&p);
    edges_pattern("ranks 9\n2 0\n", &p);
    ld = lmpi_map_loads(&net, &p, node_of, false);
    CHECK_NEAR(ld[L(&net, 2, 0, 1)], 1);
    CHECK_NEAR(ld[L(&net, 1, 0, 1)], 1);
    CHECK_NEAR(ld[L(&net, 2, 0, 0)], 0);
    free(ld);
    lmpi_pattern_free(&p);
    lmpi_net_free(&net);

    /* Tree: n0..n3 under s0 (n0, n1) and s1 (n2, n3) under top. */
    const char *tree = "cores 1\nSwitchName=s0 Nodes=n[0-1]\nSwitchName=s1 Nodes=n[2-3]\nSwitchName=top Switches=s[0-1]\n";
    CHECK_EQ(lmpi_net_parse_text(tree, "tree", 0, &net, errbuf, sizeof(errbuf)), 0);
    edges_pattern("ranks 4\n0 3\n0 1\n", &p);
    ld = lmpi_map_loads(&net, &p, node_of, false);
    int64_t nv = net.nodes + net.nswitches;
    CHECK_NEAR(ld[0], 2);      /* n0 up: both messages */
    CHECK_NEAR(ld[4], 1);      /* s0 up */
    CHECK_NEAR(ld[nv + 5], 1); /* down into s1 */
    CHECK_NEAR(ld[nv + 3], 1); /* down into n3 */
    CHECK_NEAR(ld[nv + 1], 1); /* down into n1 */
    CHECK_NEAR(ld[nv + 6], 0); /* the root has no uplink */
    free(ld);
    CHECK_EQ(lmpi_map_evaluate(&net, &p, node_of, false, &m, errbuf, sizeof(errbuf)), 0);
    CHECK_EQ(m.max_dilation, 4);
    CHECK_NEAR(m.hop_bytes, 100 * (4 + 2));
    CHECK_NEAR(m.max_contention, 2);
    lmpi_pattern_free(&p);
    lmpi_net_free(&net);
}

/* The paper's worked example (§3.2): a 128x128 2D star stencil on an
 * 8x16x32 torus with 4 cores per node.  The finer metrics were computed by an
 * independent brute-force script (every message routed hop by hop). */
static void test_paper_example(void)
{
    lmpi_net net;
    lmpi_pattern p;
    static lmpi_map_order o[LMPI_MAP_MAX_ORDERS];
    static lmpi_map_metrics m[LMPI_MAP_MAX_ORDERS];
    int pick;
    net_ok("torus:8x16x32", 4, &net);
    CHECK_EQ(lmpi_pattern_parse("2d-nn:128x128:star", 8192, &p, errbuf, sizeof(errbuf)), 0);
    int n = lmpi_map_choose(&net, &p, false, o, m, &pick, errbuf, sizeof(errbuf));
    static lmpi_map_order tiled[LMPI_MAP_MAX_ORDERS];
    CHECK_EQ(n, 24 + lmpi_map_tiled_orders(&net, &p, tiled)); /* the orders, then the tiled candidates */
    int txyz = -1, tzxy = -1, xyzt = -1;
    for (int i = 0; i < n; i++) {
        txyz = strcmp(o[i].name, "TXYZ") ? txyz : i;
        tzxy = strcmp(o[i].name, "TZXY") ? tzxy : i;
        xyzt = strcmp(o[i].name, "XYZT") ? xyzt : i;
    }
    CHECK_NEAR(m[txyz].paper_contention, 24);
    CHECK_NEAR(m[tzxy].paper_contention, 6);
    CHECK_NEAR(m[xyzt].paper_contention, 10); /* the paper: "about 10.5" (docs/mapping.md) */
    CHECK_NEAR(m[txyz].max_contention, 96);
    CHECK_NEAR(m[tzxy].max_contention, 24);
    CHECK_NEAR(m[xyzt].max_contention, 24);
    CHECK(fabs(m[txyz].avg_contention - 42.87) < 0.01);
    CHECK(fabs(m[tzxy].avg_contention - 14.65) < 0.01);
    CHECK(fabs(m[xyzt].avg_contention - 22.46) < 0.01);
    /* the paper's ordering, and a pick no worse than its best */
    CHECK(m[txyz].avg_contention > m[xyzt].avg_contention);
    CHECK(m[xyzt].avg_contention > m[tzxy].avg_contention);
    CHECK(m[pick].max_contention <= m[tzxy].max_contention);
    CHECK(m[pick].hop_bytes <= m[tzxy].hop_bytes);
    lmpi_pattern_free(&p);
    lmpi_net_free(&net);
}

int main(void)
{
    test_parsing();
    test_patterns();
    test_orders();
    test_routing();
    test_paper_example();
    return unit_finish("test_topo");
}
