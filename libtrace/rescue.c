/* libtrace/rescue.c: the event buffer as a shared mapping of the rank's rescue file (format.h,
 * RESCUE), so that the kernel keeps every recorded event when the rank dies, by any signal.
 *
 * The hot path is unchanged: threads fill the same chunks, which now live in the file's pages.
 * Only the chunks' life cycle (taken, queued, being written, written, free) is mirrored into the
 * file's chunk table, once per chunk. The file is fully allocated before it is mapped, so that a
 * full disk is found here, at start, and never as a SIGBUS on a store to a mapped page. */
#include "runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

_Static_assert(sizeof(fc__rec) == FC_RESCUE_RECORD_SIZE, "record size");
_Static_assert(offsetof(fc__rec, t1) == 8 && offsetof(fc__rec, bytes) == 16 && offsetof(fc__rec, bytes2) == 24 &&
                   offsetof(fc__rec, obj) == 32 && offsetof(fc__rec, peer) == 40 && offsetof(fc__rec, tag) == 44 &&
                   offsetof(fc__rec, comm) == 48 && offsetof(fc__rec, site) == 52 && offsetof(fc__rec, kind) == 56 &&
                   offsetof(fc__rec, flags) == 58 && offsetof(fc__rec, reserved) == 60,
               "the record layout of format.h (RESCUE)");

static unsigned char *table; /* the chunk table in the mapping; NULL without a rescue file */
static unsigned nmapped;     /* chunks in the mapping; those the pool grows beyond it are not */
static char path[4200];
static uint64_t take_seq;

fc__rec *fc__rescue_map(const char *dir, int rank, unsigned nchunks, uint32_t chunk_cap)
{
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    /* The records are stored as they lie in memory, which is the format's layout only here. */
    (void)dir, (void)rank, (void)nchunks, (void)chunk_cap;
    return NULL;
#else
    size_t recs_off = FC_RESCUE_HEADER_SIZE + (size_t)nchunks * FC_RESCUE_CHUNK_SIZE;
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        page = 4096;
    recs_off = (recs_off + (size_t)page - 1) / (size_t)page * (size_t)page;
    size_t size = recs_off + (size_t)nchunks * chunk_cap * sizeof(fc__rec);
    int n = snprintf(path, sizeof path, "%s/" FC_RESCUE_FILE_FMT, dir, rank);
    if (n < 0 || (size_t)n >= sizeof path) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return NULL;
    int err = posix_fallocate(fd, 0, (off_t)size);
    unsigned char *m = MAP_FAILED;
    if (err == 0)
        m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    else
        errno = err;
    int saved = errno;
    close(fd); /* the mapping keeps the file */
    if (m == MAP_FAILED) {
        unlink(path);
        errno = saved;
        return NULL;
    }
    /* A forked child must not write into the parent's buffer, nor dump it in a core file twice. */
    madvise(m, size, MADV_DONTFORK);
    unsigned char *h = m;
    memcpy(h, FC_RESCUE_MAGIC, 8);
    fc_put_u32(h + 8, FC_BOM);
    fc_put_u16(h + 12, FC_FORMAT_MAJOR);
    fc_put_u16(h + 14, FC_FORMAT_MINOR);
    fc_put_u32(h + 16, (uint32_t)rank);
    fc_put_u32(h + 20, FC_RESCUE_RECORD_SIZE);
    fc_put_u32(h + 24, chunk_cap);
    fc_put_u32(h + 28, nchunks);
    fc_put_u64(h + 32, fc__conv.tick0);
    fc_put_u64(h + 40, fc__conv.ns0);
    fc_put_u64(h + 48, fc__conv.mult);
    fc_put_u64(h + 56, recs_off);
    table = m + FC_RESCUE_HEADER_SIZE;
    nmapped = nchunks;
    return (fc__rec *)(void *)(m + recs_off);
#endif
}

/* The chunk table's fields are read only after the process is gone, so plain stores suffice; the
 * compiler barrier keeps a chunk's fields written before the state that makes them count. */
void fc__rescue_taken(unsigned chunk, uint32_t thread, fc__rec *recs)
{
    if (table == NULL || chunk >= nmapped)
        return;
    unsigned char *e = table + (size_t)chunk * FC_RESCUE_CHUNK_SIZE;
    /* The first record's entry time may precede taken_at (its call was under way when the last
     * chunk filled), so it cannot tell a new record from one of the chunk's previous fill: it is
     * cleared instead, and a reader takes its kind, once set, for the start of this fill. */
    recs[0].kind = 0;
    fc_put_u32(e + 4, thread);
    fc_put_u32(e + 8, 0);
    fc_put_u32(e + 12, 0);
    fc_put_u64(e + 16, take_seq++);
    fc_put_u64(e + 24, fc__now());
    __asm__ volatile("" ::: "memory");
    fc_put_u32(e, FC_RSC_FILLING);
}

void fc__rescue_state(unsigned chunk, unsigned state, uint32_t count)
{
    if (table == NULL || chunk >= nmapped)
        return;
    unsigned char *e = table + (size_t)chunk * FC_RESCUE_CHUNK_SIZE;
    if (state == FC_RSC_QUEUED)
        fc_put_u32(e + 8, count);
    __asm__ volatile("" ::: "memory");
    fc_put_u32(e, state);
}

int fc__rescue_holds(unsigned nchunks)
{
    return table != NULL && nchunks <= nmapped;
}

void fc__rescue_block(unsigned chunk, uint32_t seq, uint32_t count)
{
    if (table == NULL || chunk >= nmapped)
        return;
    unsigned char *e = table + (size_t)chunk * FC_RESCUE_CHUNK_SIZE;
    fc_put_u32(e + 8, count);
    fc_put_u32(e + 12, seq + 1);
    __asm__ volatile("" ::: "memory");
}

void fc__rescue_remove(void)
{
    /* unlink is async-signal-safe; the mapping stays valid for threads still recording. */
    if (table != NULL && path[0] != '\0')
        unlink(path);
    path[0] = '\0';
}
