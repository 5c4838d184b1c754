/* libtrace/rankinfo.c: describes the rank (RANK block) and chooses the trace directory. */
#include "runtime.h"
#include "renumber.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void field(fc__buf *b, unsigned key, const void *data, size_t len)
{
    unsigned char h[6];
    fc_put_u16(h, (uint16_t)key);
    fc_put_u32(h + 2, (uint32_t)len);
    fc__buf_put(b, h, sizeof h);
    fc__buf_put(b, data, len);
}

static void field_u32(fc__buf *b, unsigned key, uint32_t v)
{
    unsigned char p[4];
    fc_put_u32(p, v);
    field(b, key, p, 4);
}

static void field_text(fc__buf *b, unsigned key, const char *s)
{
    field(b, key, s, strlen(s));
}

/* Reads at most cap bytes of a small file (procfs, sysfs); returns the length or -1. */
static ssize_t slurp(const char *path, char *buf, size_t cap)
{
    int f = open(path, O_RDONLY | O_CLOEXEC);
    if (f < 0)
        return -1;
    size_t n = 0;
    ssize_t r;
    while (n < cap && (r = read(f, buf + n, cap - n)) > 0)
        n += (size_t)r;
    close(f);
    return (ssize_t)n;
}

static int numa_of(int cpu)
{
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d", cpu);
    DIR *d = opendir(path);
    if (d == NULL)
        return -1;
    int node = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "node", 4) == 0 && e->d_name[4] >= '0' && e->d_name[4] <= '9') {
            node = atoi(e->d_name + 4);
            break;
        }
    closedir(d);
    return node;
}

extern char **environ;

/* 1 for the MPICH control variables that change which algorithm a collective runs: the
 * MPIR_CVAR_*_ALGORITHM choices, the size limits and switches of the selection, and those that
 * change which ranks MPICH takes as sharing a node (NOLOCAL, the cliques). */
static int coll_var(const char *e)
{
    static const char *const words[] = {"ALGORITHM", "MSG_SIZE", "MIN_PROCS", "COLL_SELECTION", "DEVICE_COLLECTIVE",
                                        "SMP_COLLECTIVES", "NOLOCAL", "CLIQUES"};
    if (strncmp(e, "MPIR_CVAR_", 10) != 0)
        return 0;
    size_t n = strcspn(e, "=");
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        const char *w = strstr(e, words[i]);
        if (w != NULL && (size_t)(w - e) < n)
            return 1;
    }
    return 0;
}

/* The FC_RK_COLL_ENV field: those variables as NAME=VALUE, each ended by a NUL, as many as fit
 * a fixed buffer (the runtime allocates nothing here). */
static void coll_env(fc__buf *b)
{
    static char env[4096];
    size_t n = 0;
    for (char **e = environ; e != NULL && *e != NULL; e++) {
        size_t l = strlen(*e) + 1;
        if (coll_var(*e) && n + l <= sizeof env) {
            memcpy(env + n, *e, l);
            n += l;
        }
    }
    if (n > 0)
        field(b, FC_RK_COLL_ENV, env, n);
}

void fc__rank_describe(fc__buf *b)
{
    static char big[MPI_MAX_LIBRARY_VERSION_STRING];
    char host[256] = "";
    field_u32(b, FC_RK_RANK, (uint32_t)fc__rt.rank);
    field_u32(b, FC_RK_SIZE, (uint32_t)fc__rt.size);
    if (fc__launch_slot >= 0)
        field_u32(b, FC_RK_SLOT, (uint32_t)fc__launch_slot);
    gethostname(host, sizeof host - 1);
    field_text(b, FC_RK_HOST, host);
    const char *node = getenv("FLOWCUT_NODE");
    field_text(b, FC_RK_NODE, node && *node ? node : host);
    int cpu = sched_getcpu();
    field_u32(b, FC_RK_CORE, (uint32_t)(cpu >= 0 ? cpu : -1));
    field_u32(b, FC_RK_NUMA, (uint32_t)(cpu >= 0 ? numa_of(cpu) : -1));
    int len = 0;
    if (PMPI_Get_library_version(big, &len) == MPI_SUCCESS) {
        big[len < (int)sizeof big ? len : (int)sizeof big - 1] = '\0';
        size_t n = strcspn(big, "\n");
        while (n > 0 && (big[n - 1] == ' ' || big[n - 1] == '\t' || big[n - 1] == '\r'))
            n--;
        field(b, FC_RK_MPI_VERSION, big, n);
    }
    ssize_t k = readlink("/proc/self/exe", big, sizeof big - 1);
    field(b, FC_RK_PROGRAM, big, k > 0 ? (size_t)k : 0);
    k = slurp("/proc/self/cmdline", big, sizeof big);
    field(b, FC_RK_ARGS, big, k > 0 ? (size_t)k : 0);
    unsigned char u64[8];
    fc_put_u64(u64, fc__rt.start_ns);
    field(b, FC_RK_START_NS, u64, 8);
    field_u32(b, FC_RK_PID, (uint32_t)getpid());
    field_u32(b, FC_RK_THREAD_LEVEL, (uint32_t)fc__rt.provided);
    field_u32(b, FC_RK_CALLSITE_DEPTH, (uint32_t)fc__depth);
    field_text(b, FC_RK_CLOCK_SOURCE, fc__rt.clock_name ? fc__rt.clock_name : "clock_gettime");
    k = slurp("/proc/self/status", big, sizeof big - 1);
    if (k > 0) {
        big[k] = '\0';
        char *p = strstr(big, "Cpus_allowed_list:");
        if (p != NULL) {
            p += strlen("Cpus_allowed_list:");
            p += strspn(p, " \t");
            field(b, FC_RK_AFFINITY, p, strcspn(p, "\n"));
        }
    }
    field_u32(b, FC_RK_INIT_MODE, (uint32_t)fc__rt.init_mode);
    coll_env(b);
}

void fc__trace_dir(char *dir, size_t n, int coll)
{
    char name[256] = "";
    if (fc__rt.rank == 0 || !coll) {
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(name, sizeof name, "flowcut-%Y%m%d-%H%M%S", &tm);
    }
    /* Every rank joins the broadcast, even one with FLOWCUT_DIR set, so that a per-rank
     * setting cannot leave the others waiting. */
    if (coll)
        PMPI_Bcast(name, (int)sizeof name, MPI_CHAR, 0, fc__rt.sync_comm);
    const char *e = getenv("FLOWCUT_DIR");
    if (e != NULL && *e != '\0') {
        snprintf(dir, n, "%s", e);
    } else if (coll) {
        snprintf(dir, n, "%s", name);
    } else {
        /* Started lazily: no collective is possible, so the ranks cannot agree on a time. The
         * launcher's proxy is the parent of every rank of a node, so its pid names the run. */
        snprintf(dir, n, "flowcut-lazy-%d", (int)getppid());
        fc__warn("MPI_Init was not seen and FLOWCUT_DIR is unset; tracing into '%.200s'", dir);
    }
}
