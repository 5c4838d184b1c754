/* libtrace/renumber.c: runs the program's ranks in the slots a rank order gives them (renumber.h).
 *
 * The launcher starts process s (its slot) as rank s of the real MPI_COMM_WORLD; with the order of
 * `flowcut remap --format hydra` (slot by slot, the program rank that belongs there), the process
 * in slot s becomes rank order[s] of fc__world. The traced wrappers (wrappers.c) hand MPI
 * fc__wc(comm) for every communicator argument, and renumber-wrap.c wraps the other MPI functions
 * that take one. */
#include "runtime.h"
#include "renumber.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

MPI_Comm fc__world = MPI_COMM_WORLD;
int fc__launch_slot = -1;

/* Reads the order from text: integers separated by commas or blanks. Returns the count (up to
 * cap), or -1 with why set when a word is not a non-negative integer. */
static long parse_list(const char *s, int *out, long cap, const char **why)
{
    long n = 0;
    while (*s) {
        while (*s == ',' || isspace((unsigned char)*s))
            s++;
        if (!*s)
            break;
        if (!isdigit((unsigned char)*s)) {
            *why = "it holds something other than rank numbers";
            return -1;
        }
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (errno || v > 0x7fffffff) {
            *why = "a rank number is too large";
            return -1;
        }
        if (n < cap)
            out[n] = (int)v;
        n++;
        s = end;
        if (*s && *s != ',' && !isspace((unsigned char)*s)) {
            *why = "it holds something other than rank numbers";
            return -1;
        }
    }
    return n;
}

/* The text of the order: the variable itself when it starts with a digit, else the file it names,
 * whose `# rank-order:` line (a Hydra machinefile of `flowcut remap`) or, without one, whose lines
 * that are not comments hold the order. Returns a malloc'd string or NULL with why set. */
static char *order_text(const char *v, const char **why)
{
    const char *p = v;
    while (isspace((unsigned char)*p))
        p++;
    if (isdigit((unsigned char)*p))
        return strdup(p);
    FILE *f = fopen(v, "r");
    if (f == NULL) {
        *why = "cannot read the file it names";
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char *all = malloc(cap), line[65536];
    char *found = NULL;
    if (all == NULL) {
        fclose(f);
        *why = "out of memory";
        return NULL;
    }
    all[0] = '\0';
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "# rank-order:", 13) == 0) {
            found = strdup(line + 13);
            break;
        }
        if (line[0] == '#')
            continue;
        size_t l = strlen(line);
        if (len + l + 2 > cap) {
            char *g = realloc(all, (cap = 2 * (len + l + 2)));
            if (g == NULL)
                break;
            all = g;
        }
        memcpy(all + len, line, l);
        all[len += l] = ' ';
        all[++len] = '\0';
    }
    fclose(f);
    if (found != NULL) {
        free(all);
        return found;
    }
    return all;
}

/* Checks the order against the world's size; returns NULL when good, else why not. */
static const char *check_order(const char *v, int size, int *order, char *why, size_t cap)
{
    const char *w = NULL;
    char *text = order_text(v, &w);
    if (text == NULL)
        return w;
    long n = parse_list(text, order, size, &w);
    free(text);
    if (n < 0)
        return w;
    if (n != size) {
        snprintf(why, cap, "it orders %ld ranks, the run has %d", n, size);
        return why;
    }
    char *seen = calloc((size_t)size, 1);
    if (seen == NULL)
        return "out of memory";
    for (int i = 0; i < size; i++) {
        if (order[i] >= size || seen[order[i]]) {
            snprintf(why, cap, "it is not a permutation of 0..%d (%d %s)", size - 1, order[i],
                     order[i] >= size ? "is out of range" : "appears twice");
            free(seen);
            return why;
        }
        seen[order[i]] = 1;
    }
    free(seen);
    return NULL;
}

/* Ends the run before the program goes on: world rank 0 prints the one line and aborts; the others
 * wait for the abort. Every rank reaches this together (the verdict is agreed first). */
static void refuse(int rank, const char *what)
{
    if (rank == 0) {
        fprintf(stderr, "flowcut: FLOWCUT_RANK_ORDER: %s; the program is not run\n", what);
        fflush(stderr);
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    PMPI_Barrier(MPI_COMM_WORLD);
    PMPI_Abort(MPI_COMM_WORLD, 1);
}

void fc__renumber_init(void)
{
    const char *v = getenv("FLOWCUT_RANK_ORDER");
    if (v == NULL || *v == '\0' || fc__world != MPI_COMM_WORLD)
        return;
    int rank = 0, size = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    int *order = malloc((size_t)size * sizeof *order);
    char buf[160];
    const char *why = order ? check_order(v, size, order, buf, sizeof buf) : "out of memory";
    /* The ranks agree on the verdict, so that all of them stop or none does; rank 0 tells why, or
     * that another rank saw a different order (a file that differs between nodes). */
    int bad = why != NULL, anybad = 0;
    PMPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (anybad) {
        free(order);
        refuse(rank, why ? why : "another rank could not read it (is the file on every node?)");
        return;
    }
    MPI_Comm c = MPI_COMM_NULL;
    int rc = PMPI_Comm_split(MPI_COMM_WORLD, 0, order[rank], &c);
    free(order);
    if (rc != MPI_SUCCESS || c == MPI_COMM_NULL) {
        refuse(rank, "MPI could not build the renumbered world");
        return;
    }
    PMPI_Comm_set_name(c, "MPI_COMM_WORLD");
    fc__world = c;
    fc__launch_slot = rank;
}

void fc__renumber_missed(void)
{
    const char *v = getenv("FLOWCUT_RANK_ORDER");
    if (v == NULL || *v == '\0' || fc__world != MPI_COMM_WORLD)
        return;
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "flowcut: rank %d: FLOWCUT_RANK_ORDER is set but MPI was initialised without "
                    "MPI_Init or MPI_Init_thread, so the ranks cannot be renumbered; the run stops\n",
            rank);
    PMPI_Abort(MPI_COMM_WORLD, 1);
}
