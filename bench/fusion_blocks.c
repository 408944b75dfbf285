/* fusion_blocks.c — which way a fused node should run (doc/design.md
 * "Fusion"), measured on plain C loops: a 5-op chain over 16*64*256 floats
 * run (1) unfused, one pass over memory per op; (2) in blocks, every op over
 * a block of B elements while it sits in cache (what graph/fusion_run.c
 * does); (3) by a per-element interpreter, the op list applied to one
 * element at a time. Two chains: GELU's (x / sqrt 2, erf, + 1, x * 0.5, *)
 * and a cheap one (*, +, max, *, +). Best of 15 runs, milliseconds.
 * Not part of `make bench` (it measures no moonflow code); by hand:
 *   cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -march=native bench/fusion_blocks.c -lm
 *   ./a.out [B [cheap]] */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MUL, ADD, ERF, MAX };

/* One op: operands are registers (0 is x, k + 1 the result of op k), -1 for
 * the constant 'c'. */
typedef struct Ins {
    int op, a, b;
    float c;
} Ins;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static float apply1(int op, float a, float b)
{
    switch (op) {
    case MUL: return a * b;
    case ADD: return a + b;
    case MAX: return a > b ? a : b;
    default: return erff(a);
    }
}

/* The op over 'n' elements: a typed loop per op, as the kernels are. */
static void kernel(const Ins *p, const float *a, const float *b, float *o, long n)
{
    switch (p->op) {
    case MUL:
        if (b)
            for (long i = 0; i < n; i++)
                o[i] = a[i] * b[i];
        else
            for (long i = 0; i < n; i++)
                o[i] = a[i] * p->c;
        break;
    case ADD:
        if (b)
            for (long i = 0; i < n; i++)
                o[i] = a[i] + b[i];
        else
            for (long i = 0; i < n; i++)
                o[i] = a[i] + p->c;
        break;
    case MAX:
        for (long i = 0; i < n; i++)
            o[i] = a[i] > b[i] ? a[i] : b[i];
        break;
    default:
        for (long i = 0; i < n; i++)
            o[i] = erff(a[i]);
    }
}

/* The chain 'p' of 5 ops on 'x' (registers 'r', 'n' elements each) into 'out'. */
static void run_ops(const Ins *p, float **r, float *out, long n)
{
    for (int k = 0; k < 5; k++) {
        float *o = k == 4 ? out : r[k + 1];
        kernel(&p[k], r[p[k].a], p[k].b >= 0 ? r[p[k].b] : NULL, o, n);
        r[k + 1] = o;
    }
}

int main(int argc, char **argv)
{
    long n = 16 * 64 * 256, bl = argc > 1 ? atol(argv[1]) : 4096;
    bool cheap = argc > 2;
    static const Ins gelu[5] = {{MUL, 0, -1, 0.70710678f}, {ERF, 1, -1, 0}, {ADD, 2, -1, 1},
                                {MUL, 0, -1, 0.5f}, {MUL, 4, 3, 0}};
    static const Ins arith[5] = {{MUL, 0, -1, 0.7f}, {ADD, 1, -1, 1}, {MAX, 2, 0, 0},
                                 {MUL, 3, 1, 0}, {ADD, 4, 0, 0}};
    const Ins *p = cheap ? arith : gelu;
    float *x = malloc((size_t)n * 4), *out = malloc((size_t)n * 4), *full[6], *blk[6];
    for (long i = 0; i < n; i++)
        x[i] = (float)((i * 7919 % 4001) - 2000) / 1000.f;
    for (int k = 0; k < 6; k++) {
        full[k] = malloc((size_t)n * 4);
        blk[k] = malloc((size_t)bl * 4);
    }
    double best[3] = {1e9, 1e9, 1e9};
    for (int rep = 0; rep < 15; rep++) {
        double t0 = now();
        float *r[6] = {x, full[1], full[2], full[3], full[4], full[5]};
        run_ops(p, r, out, n);
        double t1 = now();
        for (long s = 0; s < n; s += bl) {
            float *rb[6] = {x + s, blk[1], blk[2], blk[3], blk[4], blk[5]};
            run_ops(p, rb, out + s, n - s < bl ? n - s : bl);
        }
        double t2 = now();
        for (long i = 0; i < n; i++) {
            float v[6] = {x[i]};
            for (int k = 0; k < 5; k++)
                v[k + 1] = apply1(p[k].op, v[p[k].a], p[k].b >= 0 ? v[p[k].b] : p[k].c);
            out[i] = v[5];
        }
        double t3 = now(), d[3] = {t1 - t0, t2 - t1, t3 - t2};
        for (int k = 0; k < 3; k++)
            best[k] = d[k] < best[k] ? d[k] : best[k];
    }
    printf("%s chain, %ld floats, block %ld: unfused %.3f ms, blocked %.3f ms, per-element "
           "interpreter %.3f ms\n", cheap ? "arith" : "gelu", n, bl, best[0] * 1e3,
           best[1] * 1e3, best[2] * 1e3);
    return 0;
}
