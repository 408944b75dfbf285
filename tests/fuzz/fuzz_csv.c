/* fuzz_csv.c — libFuzzer entry for the csv reader (see fuzz_one.h). */
#include <stdlib.h>

#define FUZZ_FAIL(msg) (fprintf(stderr, "fuzz_csv: %s\n", (msg)), abort())
#include "tests/fuzz/fuzz_one.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_one_csv(data, size);
    return 0;
}
