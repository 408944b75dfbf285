#!/bin/sh
# attention.sh BUILD — the attention op alone (issue 28): causal
# scaled_dot_product_attention on (12, 4, T, 32) float32 for T = 64, 256 and
# 1024, forward and forward + backward (bench/attention.lua), beside
# PyTorch's explicit masked-softmax path, nanoGPT's "slow attention"
# (bench/torch_attention.py), on 1 and 2 threads; wall-clock medians in ms.
# torch/mf: how many times faster moonflow is (target at T = 1024: 2x).
build=${1:-build/release}
torch_ok=0
/usr/bin/python3 -c "import torch" 2>/dev/null && torch_ok=1
echo
printf "%-40s %10s %10s %9s\n" "attention causal (12,4,T,32), ms" "moonflow" "PyTorch" \
    "torch/mf"
for threads in 1 2; do
    out=/tmp/mf_bench_attention_$threads.txt
    MOONFLOW_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads \
        "$build/moonflow" bench/attention.lua > "$out" 2>/dev/null || : > "$out"
    if [ $torch_ok = 1 ]; then
        # OpenBLAS single-threaded under PyTorch too (bench/layers.sh says why)
        OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_attention.py "$threads" \
            | sed 's/^/torch_/' >> "$out" 2>/dev/null
    fi
    for key in fwd_64 fwdbwd_64 fwd_256 fwdbwd_256 fwd_1024 fwdbwd_1024; do
        awk -v k="$key" -v th="$threads" '{v[$1] = $2} END {
            m = ("attn_" k in v) ? v["attn_" k] : "-"
            t = ("torch_attn_" k in v) ? v["torch_attn_" k] : "-"
            r = (m != "-" && t != "-" && m > 0) ? sprintf("%.2fx", t / m) : "-"
            split(k, p, "_")
            name = (p[1] == "fwd" ? "forward" : "fwd+bwd") " T=" p[2] ", " th " thread" \
                (th > 1 ? "s" : "")
            printf "%-40s %10s %10s %9s\n", name, m, t, r
        }' "$out"
    done
done
exit 0
