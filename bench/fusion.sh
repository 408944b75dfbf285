#!/bin/sh
# fusion.sh BUILD — fused nodes in traced graphs (issue 29, point 3): the
# GELU-MLP block (Dense, GELU, Dense on (16, 64, 256)), forward and
# backward, eagerly, traced without fusion and traced with it
# (bench/fusion.lua), beside PyTorch's eager step (bench/torch_fusion.py),
# on 1 and 2 threads; wall-clock medians. Target: fused at least 1.3x faster
# than the same trace unfused. "bound": the most fusion could give (the
# unfused step's op time over its GEMMs' time, profiled): the target is out of
# reach where it is below 1.3. Called by bench/elementwise.sh.
build=${1:-build/release}
torch_ok=0
/usr/bin/python3 -c "import torch" 2>/dev/null && torch_ok=1
echo
printf "%-34s %10s %10s %10s %10s %9s %6s\n" "GELU-MLP fwd+bwd (16,64,256), ms" "eager" \
    "traced" "fused" "PyTorch" "traced/fused" "bound"
for threads in 1 2; do
    out=/tmp/mf_bench_fusion_$threads.txt
    MOONFLOW_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads \
        "$build/moonflow" bench/fusion.lua > "$out" 2>/dev/null || : > "$out"
    if [ $torch_ok = 1 ]; then
        # OpenBLAS single-threaded under PyTorch too (bench/layers.sh says why)
        OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_fusion.py "$threads" >> "$out" \
            2>/dev/null
    fi
    awk -v th="$threads" '{v[$1] = $2} END {
        t = ("mlp_torch" in v) ? v["mlp_torch"] : "-"
        r = "-"
        if ("mlp_fused" in v && v["mlp_fused"] > 0)
            r = sprintf("%.2fx", v["mlp_traced"] / v["mlp_fused"])
        b = ("mlp_bound" in v) ? sprintf("%.2fx", v["mlp_bound"]) : "-"
        printf "%-34s %10s %10s %10s %10s %9s %6s\n", th " thread" (th > 1 ? "s" : ""),
            v["mlp_eager"], v["mlp_traced"], v["mlp_fused"], t, r, b
    }' "$out"
done
exit 0
