#!/bin/sh
# char_gpt.sh BUILD — the char-GPT training step (issue #28's benchmark):
# nanoGPT's CPU recipe in moonflow, eager and traced (bench/char_gpt.lua),
# beside PyTorch's model.py and train.py step (bench/torch_char_gpt.py), with
# the same initial weights and batches, on 1 and 2 threads. Each process
# times 5 rounds of 20 steps and prints their median (wall time per step);
# PyTorch, eager and traced then run alternately ROUNDS times (default 3)
# and each column is the median of those, since this machine's speed drifts
# by tens of percent within minutes.
# moonflow gets MOONFLOW_NUM_THREADS and OPENBLAS_NUM_THREADS = the thread
# count; PyTorch's figure is its best split of the threads between
# torch.set_num_threads and OpenBLAS (bench/torch_threads.sh), printed under
# the rows with the others. Target (issue #28): traced at least 1.5x faster
# than PyTorch (mf/torch <= 0.67).
. bench/torch_threads.sh
build=${1:-build/release}
rounds=${ROUNDS:-3}
torch_ok=0
/usr/bin/python3 -c "import torch" 2>/dev/null && torch_ok=1
tmp=$(mktemp -d /tmp/mf_bench_gpt.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
file=$tmp/gpt.safetensors
# the median of the numbers in field 2 of FILE's lines whose field 1 is KEY
median_of() {
    awk -v k="$1" '$1 == k && $2 != "-" {v[++n] = $2}
        END {
            if (n == 0) { print "-"; exit }
            for (i = 2; i <= n; i++)
                for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            print v[int((n + 1) / 2)]
        }' "$2"
}
echo
printf "%-28s %12s %12s %10s\n" "char-GPT step (wall, median)" "moonflow" "PyTorch" "mf/torch"
for threads in 1 2; do
    times=$tmp/times_$threads.txt
    : > "$times"
    splits=""
    r=1
    while [ $r -le "$rounds" ]; do
        tout=$tmp/torch_${threads}_$r.txt
        arg=""
        if [ $torch_ok = 1 ] && torch_best "$threads" "$tout" bench/torch_char_gpt.py "$file"; then
            awk '$2 == "torch" {print "torch", $3}' "$tout" >> "$times"
            splits="$splits${splits:+; }$(torch_splits "$tout" "gpt torch")"
            arg=$file
        fi
        for mode in eager traced; do
            ms=$(MOONFLOW_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads \
                "$build/moonflow" bench/char_gpt.lua "$mode" $arg 2>/dev/null |
                awk '$1 == "gpt" {print $3}')
            echo "$mode ${ms:--}" >> "$times"
        done
        r=$((r + 1))
    done
    t=$(median_of torch "$times")
    for mode in eager traced; do
        ms=$(median_of "$mode" "$times")
        ratio="-"
        if [ "$t" != "-" ] && [ "$ms" != "-" ]; then
            ratio=$(awk -v a="$ms" -v b="$t" 'BEGIN {printf "%.2f", a / b}')
        fi
        printf "%-28s %9s ms %9s ms %10s\n" "gpt $mode, $threads thread(s)" "$ms" "$t" "$ratio"
    done
    echo "  rounds, ms: $(awk '{s[$1] = s[$1] (s[$1] ? " " : "") $2}
        END {printf "PyTorch %s; eager %s; traced %s", s["torch"], s["eager"], s["traced"]}' "$times")"
    [ -n "$splits" ] && echo "  PyTorch's thread splits, ms: $splits"
done
