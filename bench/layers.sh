#!/bin/sh
# layers.sh BUILD — training steps written with mf.layers (bench/layers.lua)
# beside PyTorch's nn modules (bench/torch_layers.py), on 1 and 2 threads:
# the CNN with batch norm (issue 17's target: 1.3x faster than PyTorch), the
# LSTM language-model step (forward + BPTT + Adam; the same target) and the
# per-layer overhead of model(x) over the same ops by hand on the MLP step
# (target: under 5%). mf/torch below 1: moonflow is faster.
build=${1:-build/release}
torch_ok=0
/usr/bin/python3 -c "import torch" 2>/dev/null && torch_ok=1
echo
printf "%-34s %12s %12s %10s\n" "mf.layers training step (median)" "moonflow" "PyTorch" "mf/torch"
for threads in 1 2; do
    out=/tmp/mf_bench_layers_$threads.txt
    : > "$out"
    if [ $torch_ok = 1 ]; then
        # OpenBLAS single-threaded under PyTorch too: torch.set_num_threads does
        # not reach Debian's OpenBLAS, which otherwise takes every core for the
        # GEMMs ("1 thread" LSTM 18 ms on 2 cores vs 23.5 ms on one) and, on 2
        # threads, oversubscribes them beside OpenMP (44-190 ms vs 22 ms)
        OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_layers.py "$threads" >> "$out" \
            2>/dev/null
    fi
    for run in "cnn_bn eager" "cnn_bn trace" "lstm eager" "lstm trace" "mlp layers" "mlp hand"; do
        # shellcheck disable=SC2086
        OPENBLAS_NUM_THREADS=$threads "$build/moonflow" bench/layers.lua $run >> "$out" \
            2>/dev/null || echo "layers $run -" >> "$out"
    done
    for run in "cnn_bn eager" "cnn_bn trace" "lstm eager" "lstm trace" "mlp layers" "mlp hand"; do
        set -- $run
        ms=$(awk -v w="$1" -v m="$2" '$2 == w && $3 == m {print $4}' "$out")
        t=$(awk -v w="$1" '$2 == w && $3 == "torch" {print $4}' "$out")
        [ -n "$t" ] || t="-"
        ratio="-"
        if [ "$t" != "-" ] && [ -n "$ms" ] && [ "$ms" != "-" ]; then
            ratio=$(awk -v a="$ms" -v b="$t" 'BEGIN {printf "%.2f", a / b}')
        fi
        printf "%-34s %9s ms %9s ms %10s\n" "$1 $2, $threads thread(s)" "$ms" "$t" "$ratio"
    done
    # the overhead from both steps alternating in one process, in CPU time
    # (bench/layers.lua mlp overhead): separate wall-time runs differ by more
    # than 5% on a loaded machine
    OPENBLAS_NUM_THREADS=$threads "$build/moonflow" bench/layers.lua mlp overhead 15 \
        2>/dev/null | awk '{printf "%-34s %+9.1f %% (%s vs %s ms CPU)\n", \
                          "model(x) overhead over hand ops", $6, $4, $5}'
done
