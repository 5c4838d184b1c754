/* random-clocks.c: writes, with flowcut's public writer API, a small trace whose ranks have random
 * clocks (random start times, offsets to rank 0 of either sign and up to seconds, drift between the
 * initial and final measurement), so that test-otf2-clocks.sh can check the export's clock rules
 * (no event before the global offset, none after its end) over many draws.
 *
 * Usage: random-clocks SEED DIR   (writes DIR/rank-*.fct; the same SEED gives the same trace)
 *
 * Every rank makes MPI_Init, then a random number of barriers and sends to the next rank, each
 * with a random duration and gap, then MPI_Finalize, and ends tracing a little after it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <flowcut/format.h>
#include <flowcut/writer.h>

static uint64_t state;

/* xorshift64*: a seeded stream that does not depend on the C library's rand. */
static uint64_t next(void)
{
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * UINT64_C(2685821657736338717);
}

static uint64_t below(uint64_t n)
{
    return n ? next() % n : 0;
}

static void check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "random-clocks: %s: %s\n", what, fc_errmsg());
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: random-clocks SEED DIR\n");
        return 2;
    }
    state = strtoull(argv[1], NULL, 10) * UINT64_C(0x9E3779B97F4A7C15) + 1;
    if (mkdir(argv[2], 0777) < 0) {
        perror(argv[2]);
        return 1;
    }
    uint32_t size = 2 + (uint32_t)below(3);
    for (uint32_t r = 0; r < size; r++) {
        char path[4096];
        fc_writer *w;
        snprintf(path, sizeof path, "%s/" FC_TRACE_FILE_FMT, argv[2], (int)r);
        check(fc_writer_open(path, r, size, 0, 0, 0, &w), "open");
        fc_rank_info info = {.present = (1u << FC_RK_RANK) | (1u << FC_RK_SIZE) | (1u << FC_RK_NODE),
                             .rank = r, .size = size, .node = r % 2 ? "b" : "a", .core = -1, .numa = -1,
                             .thread_level = -1};
        check(fc_writer_rank(w, &info), "rank");
        /* Local clocks start anywhere from a microsecond to an hour, half the time within the first
         * second, where an offset of -2 s makes aligned times negative; rank 0's offset is 0. */
        uint64_t t = 1000 + below(below(2) ? UINT64_C(1000000000) : UINT64_C(3600000000000));
        fc_event ev[64];
        size_t n = 0;
        ev[n++] = (fc_event){.kind = FC_EV_MPI_Init, .t0 = t, .t1 = t + 1 + below(1000000), .peer = FC_PEER_NONE};
        t = ev[0].t1;
        uint64_t init_at = t;
        size_t calls = below(40);
        for (size_t i = 0; i < calls; i++) {
            t += below(2000000);
            int send = below(2) == 0;
            ev[n++] = (fc_event){.kind = send ? FC_EV_MPI_Send : FC_EV_MPI_Barrier, .t0 = t, .t1 = t + below(500000),
                                 .peer = send ? (int64_t)((r + 1) % size) : FC_PEER_NONE, .bytes = send ? 8 : 0};
            t = ev[n - 1].t1;
        }
        t += below(1000000);
        ev[n++] = (fc_event){.kind = FC_EV_MPI_Finalize, .t0 = t, .t1 = t, .peer = FC_PEER_NONE};
        check(fc_writer_events(w, 0, ev, n), "events");
        /* Offsets up to +-2 s, drifting by up to 1 ms between the two measurements. */
        int64_t off = r == 0 ? 0 : (int64_t)below(UINT64_C(4000000000)) - INT64_C(2000000000);
        int64_t drift = r == 0 ? 0 : (int64_t)below(2000000) - 1000000;
        fc_clock k[2] = {{.phase = FC_CLOCK_INIT, .local_ns = init_at, .offset_ns = off, .uncertainty_ns = below(5000),
                          .samples = 10, .min_rtt_ns = 1000},
                         {.phase = FC_CLOCK_FINALIZE, .local_ns = t + 10, .offset_ns = off + drift,
                          .uncertainty_ns = below(5000), .samples = 10, .min_rtt_ns = 1000}};
        check(fc_writer_clock(w, k, 2), "clock");
        check(fc_writer_end(w, 0, FC_END_FINALIZE, t + 20 + below(100000), 0), "end");
        check(fc_writer_close(w), "close");
    }
    return 0;
}
