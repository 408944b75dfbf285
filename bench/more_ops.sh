#!/bin/sh
# more_ops.sh BUILD — issue 17's new ops (einsum, top_k, sort, argsort,
# cumprod, gather_nd) next to PyTorch on the same sizes (bench/more_ops.lua,
# bench/torch_more_ops.py). Called by bench/run.sh; one thread; medians.
build=${1:-build/release}
export OPENBLAS_NUM_THREADS=1
"$build/moonflow" bench/more_ops.lua > /tmp/mf_bench_more.txt || exit 1
torch_ok=0
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
    /usr/bin/python3 bench/torch_more_ops.py > /tmp/mf_bench_torch_more.txt && torch_ok=1
fi
while read -r name ms; do
    t="-"; ratio="-"
    if [ $torch_ok = 1 ]; then
        t=$(awk -v k="$name" '$1 == k {print $2}' /tmp/mf_bench_torch_more.txt)
        ratio=$(awk -v a="$ms" -v b="$t" 'BEGIN {printf "%.2f", a / b}')
    fi
    case $name in
        einsum_bmm) label="einsum bij,bjk (32,64,64)" ;;
        matmul_bmm) label="matmul (32,64,64) batched" ;;
        einsum_bji) label="einsum bij,bkj (32,64,64)" ;;
        gather_nd) label="gather_nd 4096 of (256,1024)" ;;
        *) label="$name (256,1024)" ;;
    esac
    printf "%-28s %9s ms %9s ms %10s\n" "$label" "$ms" "$t" "$ratio"
done < /tmp/mf_bench_more.txt
