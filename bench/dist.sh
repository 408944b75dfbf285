#!/bin/sh
# dist.sh BUILD — data-parallel training over MPI (mf.dist), `make bench`:
#   * MPI_Allreduce latency and bandwidth between 2 processes here
#     (bench/dist_comm.lua), fitted to the ring-allreduce model
#         T(n, p) = 2 (p - 1) a + 2 (p - 1) / p * n * b
#     (a: latency per message, b: seconds per byte, reduction included);
#   * weak scaling of the MLP and CNN steps (bench/dist_step.lua): 1 process
#     x 1 thread against 2 processes x 1 thread (each its own batch, the
#     same as the 1-process run's), with the allreduce overlapped with the
#     backward pass (the default) and blocking after it (overlap = false):
#     the efficiency t(1) / t(2), the allreduce's share of the 2-process
#     step, and how much of it the overlap hid; 1 process x 2 threads on the
#     2-process global batch, the honest alternative on a 2-core machine;
#     and two 1-process runs at once (no MPI), one per core (100 steps a
#     run, so the two measure at the same time): what sharing the machine
#     costs the step before any communication, the ceiling of the weak-
#     scaling efficiency here (t1 alone / t1 with the other core busy);
#   * graph mode (the step built once, run by a Session): 1 x 1, 2 x 1
#     overlapped (MPIAllreduceStart/Wait nodes) and blocking;
#   * bench/dist_probe.c (built with mpicc when installed): the MLP's last
#     backward GEMM (dW1) and its 814 kB allreduce without moonflow: alone,
#     one after the other, and the allreduce pipelined inside the GEMM in
#     2-16 row blocks; the machine's floor (memcpy, add, a core-to-core
#     copy, a hand-written shared-window allreduce);
#   * the same MLP on a batch of 512 per process (8 times the compute for the
#     same gradient bytes), a second, larger workload;
#   * the model's predicted efficiency t1 / (t1 + T(n, p)) for 8, 64 and 512
#     processes, with the a and b measured here (shared memory) and with
#     a 10 Gb Ethernet (a = 25 us, b = 0.8 ns/B) and an InfiniBand HDR
#     (a = 2 us, b = 0.05 ns/B) network, for the gradients of each model.
# Every process runs one compute thread (OPENBLAS_NUM_THREADS=1: OpenBLAS
# and moonflow's worker pool), bound to its own core (--bind-to core).
# Medians of several runs, and the fastest run beside them: the machine is
# shared, and a collective waits for the slowest process.
build=${1:-build/release}
command -v mpirun > /dev/null 2>&1 || { echo "(mpirun missing: no mf.dist bench)"; exit 0; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
mpi="mpirun --bind-to core --mca btl self,vader"
out=/tmp/mf_bench_dist.txt
: > "$out"
$mpi -np 2 "$build/moonflow" bench/dist_comm.lua >> "$out"
pin0=; pin1=
command -v taskset > /dev/null 2>&1 && pin0="taskset -c 0" && pin1="taskset -c 1"
if command -v mpicc > /dev/null 2>&1 &&
    mpicc -O3 -march=native -I/usr/include/x86_64-linux-gnu/openblas-pthread/ bench/dist_probe.c \
        -L/usr/lib/x86_64-linux-gnu/openblas-pthread/ -lopenblas -o /tmp/mf_dist_probe; then
    $mpi -np 1 /tmp/mf_dist_probe >> "$out"
    $mpi -np 2 /tmp/mf_dist_probe >> "$out"
fi
for model in mlp cnn mlp512; do
    m=${model%512}
    b=64; [ "$m" = cnn ] && b=32; [ "$model" = mlp512 ] && b=512
    execs=eager; [ "$model" = mlp512 ] || execs="eager graph"
    for e in $execs; do
        "$build/moonflow" bench/dist_step.lua "$m" 20 7 $b on $e |
            sed "s/^dist $m /dist $model /" >> "$out"
        for o in on off; do
            $mpi -np 2 "$build/moonflow" bench/dist_step.lua "$m" 20 7 "$b" $o $e |
                sed "s/^dist $m /dist $model /" >> "$out"
        done
    done
    for pin in "$pin0" "$pin1"; do
        $pin "$build/moonflow" bench/dist_step.lua "$m" 100 7 $b |
            sed "s/^dist $m 1 1 /dist $model 1 both /" >> "$out" &
    done
    wait
    $pin0 "$build/moonflow" bench/dist_step.lua "$m" 100 7 $b |
        sed "s/^dist $m 1 1 /dist $model 1 alone /" >> "$out"
    b2=$(awk -v m="$model" '$1 == "dist" && $2 == m && $3 == 2 {print 2 * $5; exit}' "$out")
    OPENBLAS_NUM_THREADS=2 "$build/moonflow" bench/dist_step.lua "$m" 20 7 "$b2" |
        sed "s/^dist $m /dist $model /" >> "$out"
done
echo
echo "== mf.dist: MPI_Allreduce between 2 processes (shared memory; load $(cut -d' ' -f1 \
/proc/loadavg) on $(nproc) cores) =="
awk '$1 == "allreduce" {printf "allreduce %10d B   median %10.1f us   fastest %10.1f us\n", \
    $2, $3, $4}' "$out"
awk '
$1 == "allreduce" && $2 == 8 { a = $4 / 2 }
$1 == "allreduce" && $2 == 4194304 { t4 = $4 }
$1 == "probe" { pm[$2 " " $3] = $4; pf[$2 " " $3] = $5 }
$1 == "dist" && $3 == 1 && $4 == 1 && $11 == "eager" { t1[$2] = $6; m1[$2] = $7; bt1[$2] = $5 }
$1 == "dist" && $3 == 1 && $4 == 1 && $11 == "graph" { g1[$2] = $6; gm1[$2] = $7 }
$1 == "dist" && $3 == 1 && $4 == "both" { if ($6 > tb[$2]) tb[$2] = $6; if ($7 > mb[$2]) mb[$2] = $7 }
$1 == "dist" && $3 == 1 && $4 == "alone" { ta[$2] = $6; ma[$2] = $7 }
$1 == "dist" && $3 == 2 && $10 == "on" && $11 == "eager" {
    t2[$2] = $6; m2[$2] = $7; ar[$2] = $8; bytes[$2] = $9 }
$1 == "dist" && $3 == 2 && $10 == "off" && $11 == "eager" { u2[$2] = $6; n2[$2] = $7; au[$2] = $8 }
$1 == "dist" && $3 == 2 && $10 == "on" && $11 == "graph" { g2[$2] = $6; gm2[$2] = $7 }
$1 == "dist" && $3 == 2 && $10 == "off" && $11 == "graph" { h2[$2] = $6; hm2[$2] = $7 }
$1 == "dist" && $3 == 1 && $4 == 2 { tt[$2] = $6; bt[$2] = $5 }
function row(m, what, med, fast) {
    if (fast != "")
        printf "%-7s %-50s %7.3f ms %7.3f ms\n", m, what, med, fast
    else
        printf "%-7s %-50s %7.3f ms\n", m, what, med
}
function pct(m, what, med, fast) {
    if (fast != "")
        printf "%-7s %-50s %9.1f%% %9.1f%%\n", m, what, med, fast
    else
        printf "%-7s %-50s %9.1f%%\n", m, what, med
}
END {
    b = (t4 - 2 * a) / 4194304 * 1e-6
    a = a * 1e-6
    printf "ring model fitted to the fastest runs: a = %.2f us, b = %.3f ns/B (%.2f GB/s)\n",
        a * 1e6, b * 1e9, 1 / b / 1e9
    if (pm["gemm 1"] != "") {
        print ""
        print "without moonflow (bench/dist_probe.c, us, median and fastest of 201):"
        printf "  dW1 GEMM (784x64 by 64x256, 1 thread): alone %.1f, both cores at once %.1f\n",
            pm["gemm 1"], pm["gemm 2"]
        printf "  814 kB: memcpy %.1f, a += b (vectorized loop) %.1f\n", pm["copy 1"], pm["add 1"]
        printf "  814 kB MPI_Allreduce %.1f (%.1f), MPI_Iallreduce + MPI_Wait %.1f (%.1f)\n",
            pm["allreduce 2"], pf["allreduce 2"], pm["iallreduce 2"], pf["iallreduce 2"]
        printf "  814 kB from the other core (written there, copied here) %.1f; hand-written " \
            "shared-window allreduce %.1f (%.1f)\n", pm["peercopy 2"], pm["shmar 2"],
            pf["shmar 2"]
        printf "  dW1 GEMM then MPI_Allreduce %.1f; pipelined in 2/4/8/16 row blocks " \
            "%.1f/%.1f/%.1f/%.1f\n", pm["gemm+ar 2"], pm["chunks2 2"], pm["chunks4 2"],
            pm["chunks8 2"], pm["chunks16 2"]
    }
    print ""
    printf "%-7s %-50s %10s %10s\n", "model", "configuration", "median", "fastest"
    n = split("mlp cnn mlp512", ms, " ")
    for (i = 1; i <= n; i++) {
        m = ms[i]
        row(m, "1 process x 1 thread, step", t1[m], m1[m])
        row(m, "the same, 100 steps a run, core 0, alone", ta[m], ma[m])
        row(m, "the same, one on each core at once, no MPI", tb[m], mb[m])
        pct(m, "no-communication ceiling t(alone)/t(at once)", 100 * ta[m] / tb[m],
            100 * ma[m] / mb[m])
        row(m, "allreduce of the gradients alone (ring model)", (2 * a + bytes[m] * b) * 1e3)
        row(m, "2 processes x 1 thread, overlapped", t2[m], m2[m])
        row(m, "2 processes x 1 thread, blocking", u2[m], n2[m])
        pct(m, "weak-scaling efficiency t1/t2, overlapped", 100 * t1[m] / t2[m],
            100 * m1[m] / m2[m])
        pct(m, "weak-scaling efficiency t1/t2, blocking", 100 * t1[m] / u2[m],
            100 * m1[m] / n2[m])
        pct(m, "allreduce share of the step, blocking", 100 * au[m] / u2[m])
        pct(m, "allreduce share of the step, overlapped", 100 * ar[m] / t2[m])
        pct(m, "allreduce time hidden by the overlap", au[m] > 0 ? 100 * (1 - ar[m] / au[m]) : 0)
        if (g1[m] != "") {
            row(m, "graph: 1 process x 1 thread, step", g1[m], gm1[m])
            row(m, "graph: 2 processes x 1 thread, overlapped", g2[m], gm2[m])
            row(m, "graph: 2 processes x 1 thread, blocking", h2[m], hm2[m])
            pct(m, "graph: weak-scaling efficiency, overlapped", 100 * g1[m] / g2[m],
                100 * gm1[m] / gm2[m])
            pct(m, "graph: weak-scaling efficiency, blocking", 100 * g1[m] / h2[m],
                100 * gm1[m] / hm2[m])
        }
        printf "%-7s %-50s %7.0f /s\n", m, "1 x 1 thread: examples per second", \
            bt1[m] / t1[m] * 1e3
        printf "%-7s %-50s %7.0f /s\n", m, "2 x 1 thread: examples per second", \
            2 * bt1[m] / t2[m] * 1e3
        printf "%-7s %-50s %7.0f /s\n", m, "1 x 2 threads: examples per second", \
            bt[m] / tt[m] * 1e3
    }
    print ""
    print "predicted efficiency t1 / (t1 + T(n, p)) (ring allreduce, no overlap):"
    printf "%-7s %9s %-22s %8s %8s %8s\n", "model", "gradient", "network", "p=8", "p=64", "p=512"
    split("here(shm) 10GbE IB-HDR", nets, " ")
    na[1] = a; nb[1] = b; na[2] = 25e-6; nb[2] = 0.8e-9; na[3] = 2e-6; nb[3] = 0.05e-9
    for (i = 1; i <= n; i++) {
        m = ms[i]
        for (k = 1; k <= 3; k++) {
            printf "%-7s %7.0fkB %-22s", m, bytes[m] / 1e3, nets[k]
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
