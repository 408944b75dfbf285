#!/bin/sh
# run.sh — `make bench`: moonflow's figures, and the same workloads in
# PyTorch side by side when /usr/bin/python3 can import torch.
# One thread for both (OPENBLAS_NUM_THREADS=1, torch.set_num_threads(1)) so
# the comparison is like for like on a shared machine.
set -e
build=${1:-build/release}
export OPENBLAS_NUM_THREADS=1
echo "== moonflow bench (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}, 1 thread, medians) =="
"$build/bench/bench_matmul" | tee /tmp/mf_bench_matmul.txt
"$build/moonflow" bench/eager_add.lua > /tmp/mf_bench_add.txt
torch_ok=0
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
    /usr/bin/python3 bench/torch_bench.py > /tmp/mf_bench_torch.txt && torch_ok=1
fi
echo
printf "%-28s %12s %12s %10s\n" "workload" "moonflow" "PyTorch" "mf/torch"
while read -r _ n us; do
    t="-"; ratio="-"
    if [ $torch_ok = 1 ]; then
        t=$(awk -v n="$n" '$1 == "add" && $2 == n {print $3}' /tmp/mf_bench_torch.txt)
        ratio=$(awk -v a="$us" -v b="$t" 'BEGIN {printf "%.2f", a / b}')
    fi
    printf "%-28s %9s us %9s us %10s\n" "eager a+b, $n float32" "$us" "$t" "$ratio"
done < /tmp/mf_bench_add.txt
mm=$(sed -n 's/.*mf.matmul \([0-9.]*\) ms.*/\1/p' /tmp/mf_bench_matmul.txt)
t="-"; ratio="-"
if [ $torch_ok = 1 ]; then
    t=$(awk '$1 == "matmul" {print $2}' /tmp/mf_bench_torch.txt)
    ratio=$(awk -v a="$mm" -v b="$t" 'BEGIN {printf "%.2f", a / b}')
fi
printf "%-28s %9s ms %9s ms %10s\n" "matmul 1024^3 float32" "$mm" "$t" "$ratio"
[ $torch_ok = 1 ] || echo "(PyTorch not found: apt-get install python3-torch for the side-by-side)"

# ---- the gradient tape (bench/eager_tape.lua, bench/torch_tape.py) ----------
# plain and taped runs in fresh processes; the extra cost is their difference
plain=$("$build/moonflow" bench/eager_tape.lua plain | awk '{print $2}')
taped=$("$build/moonflow" bench/eager_tape.lua taped | awk '{print $2}')
{
    awk -v p="$plain" -v t="$taped" 'BEGIN {printf "tape_add %.3f\n", t - p}'
    "$build/moonflow" bench/eager_tape.lua fwdbwd
} > /tmp/mf_bench_tape.txt
if [ $torch_ok = 1 ]; then
    /usr/bin/python3 bench/torch_tape.py > /tmp/mf_bench_torch_tape.txt || torch_ok=0
fi
for key in tape_add tape_fwdbwd; do
    us=$(awk -v k="$key" '$1 == k {print $2}' /tmp/mf_bench_tape.txt)
    t="-"; ratio="-"
    if [ $torch_ok = 1 ]; then
        t=$(awk -v k="$key" '$1 == k {print $2}' /tmp/mf_bench_torch_tape.txt)
        ratio=$(awk -v a="$us" -v b="$t" 'BEGIN {printf "%.2f", a / b}')
    fi
    case $key in
        tape_add) label="tape: extra per a+b (1 el)" ;;
        *) label="tape: fwd+bwd (w*x+b)^2" ;;
    esac
    printf "%-28s %9s us %9s us %10s\n" "$label" "$us" "$t" "$ratio"
done
sh bench/optimizer.sh "$build"
sh bench/train_step.sh "$build"
sh bench/char_gpt.sh "$build"
sh bench/graph.sh "$build"
sh bench/conv.sh "$build"
sh bench/layers.sh "$build"
sh bench/dist.sh "$build"
sh bench/more_ops.sh "$build"
sh bench/elementwise.sh "$build"
sh bench/attention.sh "$build"
sh bench/fashion_mnist.sh "$build"
