#!/bin/sh
# dist.sh BUILD — data-parallel training over MPI (mf.dist), `make bench`:
#   * MPI_Allreduce latency and bandwidth between 2 processes here
#     (bench/dist_comm.lua), fitted to the ring-allreduce model
#         T(n, p) = 2 (p - 1) a + 2 (p - 1) / p * n * b
#     (a: latency per message, b: seconds per byte, reduction included);
#   * weak scaling of the MLP and CNN steps (bench/dist_step.lua): 1 process
#     x 1 thread against 2 processes x 1 thread (each its own batch), the
#     efficiency t(1) / t(2) and the allreduce's share of the 2-process step;
#     and 1 process x 2 threads on the 2-process global batch, the honest
#     alternative on a 2-core machine;
#   * the model's predicted efficiency t1 / (t1 + T(n, p)) for 8, 64 and 512
#     processes, with the a and b measured here (shared memory) and with
#     a 10 Gb Ethernet (a = 25 us, b = 0.8 ns/B) and an InfiniBand HDR
#     (a = 2 us, b = 0.05 ns/B) network, for the gradients of each model.
# Medians of several runs, and the fastest run beside them: the machine is
# shared, and a collective waits for the slowest process.
build=${1:-build/release}
command -v mpirun > /dev/null 2>&1 || { echo "(mpirun missing: no mf.dist bench)"; exit 0; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
mpi="mpirun --bind-to core --mca btl self,vader"
out=/tmp/mf_bench_dist.txt
: > "$out"
$mpi -np 2 "$build/moonflow" bench/dist_comm.lua >> "$out"
for model in mlp cnn; do
    "$build/moonflow" bench/dist_step.lua "$model" >> "$out"
    $mpi -np 2 "$build/moonflow" bench/dist_step.lua "$model" >> "$out"
    b2=$(awk -v m="$model" '$1 == "dist" && $2 == m && $3 == 2 {print 2 * $5}' "$out")
    OPENBLAS_NUM_THREADS=2 "$build/moonflow" bench/dist_step.lua "$model" 20 7 "$b2" >> "$out"
done
echo
echo "== mf.dist: MPI_Allreduce between 2 processes (shared memory; load $(cut -d' ' -f1 \
/proc/loadavg) on $(nproc) cores) =="
awk '$1 == "allreduce" {printf "allreduce %10d B   median %10.1f us   fastest %10.1f us\n", \
    $2, $3, $4}' "$out"
awk '
$1 == "allreduce" && $2 == 8 { a = $4 / 2 }
$1 == "allreduce" && $2 == 4194304 { t4 = $4 }
$1 == "dist" && $3 == 1 && $4 == 1 { t1[$2] = $6; m1[$2] = $7; bytes[$2] = $9 }
$1 == "dist" && $3 == 2 { t2[$2] = $6; m2[$2] = $7; ar[$2] = $8 }
$1 == "dist" && $3 == 1 && $4 == 2 { tt[$2] = $6; bt[$2] = $5 }
END {
    b = (t4 - 2 * a) / 4194304 * 1e-6
    a = a * 1e-6
    printf "ring model fitted to the fastest runs: a = %.2f us, b = %.3f ns/B (%.2f GB/s)\n",
        a * 1e6, b * 1e9, 1 / b / 1e9
    print ""
    printf "%-6s %-34s %10s %10s\n", "model", "configuration", "median", "fastest"
    n = split("mlp cnn", ms, " ")
    for (i = 1; i <= n; i++) {
        m = ms[i]
        printf "%-6s %-34s %7.3f ms %7.3f ms\n", m, "1 process x 1 thread, step", t1[m], m1[m]
        printf "%-6s %-34s %7.3f ms %7.3f ms\n", m, "2 processes x 1 thread, step", t2[m], m2[m]
        printf "%-6s %-34s %9.1f%% %9.1f%%\n", m, "weak-scaling efficiency t1/t2", \
            100 * t1[m] / t2[m], 100 * m1[m] / m2[m]
        printf "%-6s %-34s %9.1f%% %10s\n", m, "allreduce share of the 2-proc step", \
            100 * ar[m] / t2[m], ""
        printf "%-6s %-34s %7.1f /s %9s\n", m, "2 x 1: examples per second", \
            2 * bt[m] / 2 / t2[m] * 1e3, ""
        printf "%-6s %-34s %7.1f /s %9s\n", m, "1 x 2 threads: examples per second", \
            bt[m] / tt[m] * 1e3, ""
    }
    print ""
    print "predicted efficiency t1 / (t1 + T(n, p)) (ring allreduce, no overlap):"
    printf "%-6s %9s %-22s %8s %8s %8s\n", "model", "gradient", "network", "p=8", "p=64", "p=512"
    split("here(shm) 10GbE IB-HDR", nets, " ")
    na[1] = a; nb[1] = b; na[2] = 25e-6; nb[2] = 0.8e-9; na[3] = 2e-6; nb[3] = 0.05e-9
    for (i = 1; i <= n; i++) {
        m = ms[i]
        for (k = 1; k <= 3; k++) {
            printf "%-6s %7.0fkB %-22s", m, bytes[m] / 1e3, nets[k]
            split("8 64 512", ps, " ")
            for (j = 1; j <= 3; j++) {
                p = ps[j]
                T = 2 * (p - 1) * na[k] + 2 * (p - 1) / p * bytes[m] * nb[k]
                printf " %7.1f%%", 100 * (m1[m] * 1e-3) / (m1[m] * 1e-3 + T)
            }
            printf "\n"
        }
    }
}' "$out"
