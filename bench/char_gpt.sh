#!/bin/sh
# char_gpt.sh BUILD — the char-GPT training step (issue #28's benchmark):
# nanoGPT's CPU recipe in moonflow, eager and traced (bench/char_gpt.lua),
# beside PyTorch's model.py and train.py step (bench/torch_char_gpt.py), with
# the same initial weights and batches, on 1 and 2 threads. Medians of 5
# rounds of 20 steps, wall time per step, each side in a fresh process.
# moonflow gets MOONFLOW_NUM_THREADS and OPENBLAS_NUM_THREADS = the thread
# count; PyTorch's figure is its best split of the threads between
# torch.set_num_threads and OpenBLAS (bench/torch_threads.sh), printed under
# the rows with the others. Target (issue #28): traced at least 1.5x faster
# than PyTorch (mf/torch <= 0.67).
. bench/torch_threads.sh
build=${1:-build/release}
torch_ok=0
/usr/bin/python3 -c "import torch" 2>/dev/null && torch_ok=1
file=/tmp/mf_bench_gpt.safetensors
echo
printf "%-28s %12s %12s %10s\n" "char-GPT step (wall, median)" "moonflow" "PyTorch" "mf/torch"
for threads in 1 2; do
    out=/tmp/mf_bench_gpt_$threads.txt
    tout=/tmp/mf_bench_gpt_torch_$threads.txt
    : > "$out"
    t="-"
    arg=""
    if [ $torch_ok = 1 ] && torch_best "$threads" "$tout" bench/torch_char_gpt.py "$file"; then
        t=$(awk '$2 == "torch" {print $3}' "$tout")
        arg=$file
    fi
    for mode in eager traced; do
        MOONFLOW_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads \
            "$build/moonflow" bench/char_gpt.lua "$mode" $arg >> "$out" 2>/dev/null \
            || echo "gpt $mode -" >> "$out"
        ms=$(awk -v m="$mode" '$2 == m {print $3}' "$out")
        ratio="-"
        if [ "$t" != "-" ] && [ "$ms" != "-" ]; then
            ratio=$(awk -v a="$ms" -v b="$t" 'BEGIN {printf "%.2f", a / b}')
        fi
        printf "%-28s %9s ms %9s ms %10s\n" "gpt $mode, $threads thread(s)" "$ms" "$t" "$ratio"
    done
    if [ "$t" != "-" ]; then
        echo "  PyTorch: $(awk '$2 == "torch" {print $4}' "$tout") (each split, ms:" \
            "$(torch_splits "$tout" "gpt torch"))"
    fi
done
rm -f "$file"
