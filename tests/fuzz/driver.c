/* tests/fuzz/driver.c: runs a fuzz target's entry point over the files named on the command line
 * (or every file in the directories named), without libFuzzer, so that `make check` replays the
 * seeds and the regression inputs under the build's sanitizers. Exits 0 when every input ran. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "fuzz.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    size_t r;
    while (buf != NULL && (r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            unsigned char *b = realloc(buf, cap *= 2);
            if (b == NULL)
                free(buf);
            buf = b;
        }
    }
    fclose(f);
    if (buf == NULL)
        return -1;
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int runs = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) < 0) {
            perror(argv[i]);
            bad++;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            bad += run_file(argv[i]) < 0;
            runs++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        while (d != NULL && (e = readdir(d)) != NULL) {
            char p[8192];
            if (e->d_name[0] == '.')
                continue;
            snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
            bad += run_file(p) < 0;
            runs++;
        }
        if (d != NULL)
            closedir(d);
    }
    printf("%s: %d inputs, %d unreadable\n", argv[0], runs, bad);
    return bad ? 1 : 0;
}
