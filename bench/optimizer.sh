#!/bin/sh
# optimizer.sh BUILD — one optimizer step on a 1M-parameter float32 Variable
# per optimizer (the fused Apply* ops) next to c = a + b over 1M floats, and
# PyTorch's torch.optim step on the same sizes (bench/optimizer.lua,
# bench/torch_optimizer.py). Target: each step within 2x of the a + b pass.
# Called by bench/run.sh; one thread; medians of 7 runs of 40 steps.
build=${1:-build/release}
export OPENBLAS_NUM_THREADS=1
"$build/moonflow" bench/optimizer.lua > /tmp/mf_bench_opt.txt || exit 1
torch_ok=0
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
    /usr/bin/python3 bench/torch_optimizer.py > /tmp/mf_bench_torch_opt.txt && torch_ok=1
fi
add=$(awk '$1 == "add" {print $2}' /tmp/mf_bench_opt.txt)
while read -r name ms; do
    t="-"; ratio="-"
    if [ $torch_ok = 1 ]; then
        t=$(awk -v k="$name" '$1 == k {print $2}' /tmp/mf_bench_torch_opt.txt)
        ratio=$(awk -v a="$ms" -v b="$t" 'BEGIN {printf "%.2f", a / b}')
    fi
    case $name in
        add) label="c = a + b, 1M float32" ;;
        *) label="$name step, 1M float32" ;;
    esac
    printf "%-28s %9s ms %9s ms %10s\n" "$label" "$ms" "$t" "$ratio"
done < /tmp/mf_bench_opt.txt
awk -v add="$add" '$1 != "add" {printf "%s%s %.2fx", sep, $1, $2 / add; sep = ", "}
    END {print ""}' /tmp/mf_bench_opt.txt | sed 's/^/  moonflow step \/ (a + b), target <= 2x: /'
