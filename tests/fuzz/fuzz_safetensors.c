/* fuzz_safetensors.c — libFuzzer entry for the safetensors reader (see fuzz_one.h). */
#include <stdlib.h>

#define FUZZ_FAIL(msg) (fprintf(stderr, "fuzz_safetensors: %s\n", (msg)), abort())
#include "tests/fuzz/fuzz_one.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_one_safetensors(data, size);
    return 0;
}
