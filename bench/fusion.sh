#!/bin/sh
# fusion.sh BUILD — fused nodes in traced graphs (issue 29, point 3): the
# GELU-MLP block (Dense, GELU, Dense on (16, 64, 256)), forward and
# backward, eagerly, traced without fusion and traced with it
# (bench/fusion.lua), beside PyTorch's eager step (bench/torch_fusion.py),
# on 1 and 2 threads; wall-clock medians. Target: fused at least 1.3x faster
# than the same trace unfused. "bound": the most fusion could give (the
# unfused step's op time over its GEMMs' time, profiled): the target is out of
# reach where it is below 1.3. Called by bench/elementwise.sh. moonflow and
# PyTorch run alternately ROUNDS times (default 3); each column is the median.
build=${1:-build/release}
rounds=${ROUNDS:-3}
torch_ok=0
/usr/bin/python3 -c "import torch" 2>/dev/null && torch_ok=1
echo
printf "%-34s %10s %10s %10s %10s %9s %6s\n" "GELU-MLP fwd+bwd (16,64,256), ms" "eager" \
    "traced" "fused" "PyTorch" "traced/fused" "bound"
tmp=$(mktemp -d /tmp/mf_bench_fusion.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
for threads in 1 2; do
    out=$tmp/fusion_$threads.txt
    : > "$out"
    r=1
    while [ $r -le "$rounds" ]; do
        MOONFLOW_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads \
            "$build/moonflow" bench/fusion.lua >> "$out" 2>/dev/null
        if [ $torch_ok = 1 ]; then
            # OpenBLAS single-threaded under PyTorch too (bench/layers.sh says why)
            OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_fusion.py "$threads" >> "$out" \
                2>/dev/null
        fi
        r=$((r + 1))
    done
    # each key's median over the rounds
    awk -v th="$threads" '
        function median(k,    a, n, i, j, t) {
            n = cnt[k]
            for (i = 1; i <= n; i++) a[i] = val[k, i]
            for (i = 2; i <= n; i++)
                for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
            return a[int((n + 1) / 2)]
        }
        { val[$1, ++cnt[$1]] = $2 }
        END {
            for (k in cnt) v[k] = median(k)
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
