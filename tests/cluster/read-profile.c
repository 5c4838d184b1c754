/* tests/cluster/read-profile.c: a helper, not a test: reads a platform profile with the library
 * and prints the figures that test-calibrate-profile.sh checks; `make check` builds it. */
#include <inttypes.h>
#include <stdio.h>
#include <flowcut/reader.h>
#include "match/flow.h"
#include "model/profile.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: read-profile PROFILE\n");
        return 2;
    }
    fc__profile *p = NULL;
    int rc = fc__profile_read(argv[1], &p);
    if (rc != 0) {
        fprintf(stderr, "read-profile: %s\n", fc_errmsg());
        return 1;
    }
    /* The per-byte cost of the largest messages: the link's own rate. */
    const fc__segment *s = fc__profile_segment(p, 0, UINT64_MAX - 1);
    printf("nodes %" PRIu32 " ranks-per-node %" PRIu32 "\n", p->nodes, p->ranks_per_node);
    printf("inter-per-byte %.6g\n", s ? s->per_byte : -1.0);
    printf("time-1MiB %.6g\n", fc__profile_time(p, 0, 1048576));
    printf("outgoing %.4f %.4f\n", fc__profile_alpha(p, FC_CONFLICT_OUTGOING, 2, 0),
           fc__profile_alpha(p, FC_CONFLICT_OUTGOING, 2, 1));
    printf("incoming %.4f %.4f\n", fc__profile_alpha(p, FC_CONFLICT_INCOMING, 2, 0),
           fc__profile_alpha(p, FC_CONFLICT_INCOMING, 2, 1));
    printf("mixed %.4f %.4f\n", fc__profile_alpha(p, FC_CONFLICT_MIXED_IN, 2, 0),
           fc__profile_alpha(p, FC_CONFLICT_MIXED_OUT, 2, 0));
    /* Beyond the 2 ranks per node: 8 flows out of (into) one node, its ranks playing 4 each; the
     * sum of their speeds 1 / (1 + alpha), the part of the link they use together. */
    for (int in = 0; in < 2; in++) {
        double sum = 0;
        for (uint32_t i = 0; i < 8; i++)
            sum += 1 / (1 + fc__profile_alpha(p, in ? FC_CONFLICT_INCOMING : FC_CONFLICT_OUTGOING, 8, i));
        int measured = 0;
        for (size_t i = 0; i < p->ncuts; i++)
            measured |= p->cuts[i].k == 8 && p->cuts[i].kind == (in ? FC_CONFLICT_INCOMING : FC_CONFLICT_OUTGOING);
        printf("%s8 %.4f %d\n", in ? "incoming" : "outgoing", sum, measured);
    }
    printf("latejoin %d %.6g %u\n", p->has_latejoin, p->latejoin_g, (unsigned)p->latejoin_kmax);
    printf("connection %d %d %.6g\n", p->has_conn, p->conn_serial, p->conn_wait);
    printf("connends %d %.6g %d\n", p->has_conn_ends, p->conn_ends, fc__profile_conn_ordered(p));
    int opp4 = 0;
    for (size_t i = 0; i < p->nopp; i++)
        opp4 |= p->opp[i].k == 4;
    printf("opposite %zu %d %.6g %.6g %.6g %.6g\n", p->nopp, opp4, fc__profile_opposite(p, 0, 1),
           fc__profile_opposite(p, 1, 1), fc__profile_opposite(p, 0, 4), fc__profile_opposite(p, 1, 4));
    printf("maxrate %d %.6g\n", p->has_maxrate, p->has_maxrate ? p->maxrate.r_nic : 0.0);
    printf("imb %d %.6g\n", p->has_imb, p->has_imb ? p->imb_bandwidth : 0.0);
    fc__profile_free(p);
    return 0;
}
