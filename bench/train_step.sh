#!/bin/sh
# train_step.sh BUILD — one training step of the MLP 784-256-10 (batch 64)
# and of the small CNN (batch 32, 28x28x1), moonflow (bench/train_step.lua)
# beside PyTorch (bench/torch_train_step.py), on 1 and 2 threads: rows of
# workload, moonflow ms, PyTorch ms, and mf/torch (below 1: moonflow is
# faster). Each figure is the median of several timed runs in a fresh
# process. Graph-mode rows appear when the graph optimizers exist (a graph
# minimize that fails prints "-"). moonflow gets OPENBLAS_NUM_THREADS = the
# thread count; PyTorch's figure is its best split of the threads between
# torch.set_num_threads and OpenBLAS (bench/torch_threads.sh), printed under
# the rows.
. bench/torch_threads.sh
build=${1:-build/release}
torch_ok=0
/usr/bin/python3 -c "import torch" 2>/dev/null && torch_ok=1
echo
printf "%-28s %12s %12s %10s\n" "training step (wall, median)" "moonflow" "PyTorch" "mf/torch"
for threads in 1 2; do
    out=/tmp/mf_bench_train_$threads.txt
    tout=/tmp/mf_bench_train_torch_$threads.txt
    : > "$out"
    : > "$tout"
    [ $torch_ok = 1 ] && torch_best "$threads" "$tout" bench/torch_train_step.py
    for model in mlp cnn; do
        for mode in eager graph; do
            OPENBLAS_NUM_THREADS=$threads "$build/moonflow" bench/train_step.lua "$model" "$mode" \
                >> "$out" 2>/dev/null || echo "train $model $mode -" >> "$out"
        done
    done
    for model in mlp cnn; do
        t=$(awk -v m="$model" '$2 == m && $3 == "torch" {print $4}' "$tout")
        [ -n "$t" ] || t="-"
        for mode in eager graph; do
            ms=$(awk -v m="$model" -v d="$mode" '$2 == m && $3 == d {print $4}' "$out")
            ratio="-"
            if [ "$t" != "-" ] && [ "$ms" != "-" ]; then
                ratio=$(awk -v a="$ms" -v b="$t" 'BEGIN {printf "%.2f", a / b}')
            fi
            printf "%-28s %9s ms %9s ms %10s\n" "$model $mode, $threads thread(s)" "$ms" "$t" \
                "$ratio"
        done
        [ "$t" = "-" ] || echo "  PyTorch: $(awk -v m="$model" '$2 == m {print $5}' "$tout")" \
            "(each split, ms: $(torch_splits "$tout" "train $model torch"))"
    done
done
