/* tests/fuzz/fuzz.h: what the fuzz targets share: the libFuzzer entry point they each define,
 * and a private scratch directory where a target writes its input as the files the code under
 * test reads by name.
 *
 * Each target is built two ways: with clang's libFuzzer (`make fuzz`), and with driver.c for
 * `make check`, which replays the seed corpus and every input in regress/TARGET/ (each a crash
 * the fuzzer once found) through the same entry point. */
#ifndef FLOWCUT_TESTS_FUZZ_H
#define FLOWCUT_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The target's scratch directory, created on first use (mkdtemp under $TMPDIR) and removed at
 * exit; NULL when it cannot be created. */
const char *fz_dir(void);
/* Writes n bytes to the file `name` inside fz_dir() and returns its path (static storage, valid
 * until the next call), or NULL on failure. */
const char *fz_file(const char *name, const void *data, size_t n);
/* Removes everything inside fz_dir(), keeping the directory. */
void fz_clear(void);

#endif /* FLOWCUT_TESTS_FUZZ_H */
