/* fuzz_idx.c — libFuzzer entry for the idx reader (see fuzz_one.h). */
#include <stdlib.h>

#define FUZZ_FAIL(msg) (fprintf(stderr, "fuzz_idx: %s\n", (msg)), abort())
#include "tests/fuzz/fuzz_one.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_one_idx(data, size);
    return 0;
}
