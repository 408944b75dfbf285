#!/bin/sh
# elementwise.sh BUILD [ROW...] — issue 29's elementwise table: every row of
# bench/elementwise.lua (moonflow) beside bench/elementwise_peer.py (PyTorch
# and NumPy) at 4,096, 131,072 and 4,194,304 float32 elements, on 1 and 2
# threads; medians; the ratio to the faster peer (below 1: moonflow is
# faster) and the geometric mean of the ratios (all rows, and the 131k and
# 4M rows the targets are about). Called by bench/run.sh; ROW names
# run only those rows. Rows are added in the .lua and the .py, not here.
build=${1:-build/release}
[ $# -gt 0 ] && shift
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo
echo "== elementwise ops, float32 (CPU: $cpu; OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}) =="
peer_ok=0
/usr/bin/python3 -c "import torch, numpy" 2>/dev/null && peer_ok=1
[ $peer_ok = 1 ] || echo "(PyTorch or NumPy not found: apt-get install python3-torch)"
printf "%-14s %8s %3s %10s %10s %10s %8s\n" "op" "n" "thr" "moonflow" "PyTorch" "NumPy" "mf/best"
# Intermediate files of this run only: two runs at once must not mix tables.
tmp=$(mktemp -d /tmp/mf_bench_elementwise.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
for threads in 1 2; do
    mf=$tmp/mf_$threads.txt
    peer=$tmp/peer_$threads.txt
    : > "$peer"
    OPENBLAS_NUM_THREADS=$threads "$build/moonflow" bench/elementwise.lua "$threads" "$@" \
        > "$mf" || exit 1
    if [ $peer_ok = 1 ]; then
        OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/elementwise_peer.py "$threads" "$@" \
            > "$peer" 2>/dev/null
    fi
    # join on (name, n): moonflow's lines first, then the peers'
    awk -v thr="$threads" '
        FNR == NR { key[FNR] = $1 " " $2; ms[$1 " " $2] = $3; rows = FNR; next }
        { torch[$1 " " $2] = $3; np[$1 " " $2] = $4 }
        END {
            for (i = 1; i <= rows; i++) {
                k = key[i]; split(k, f, " ")
                t = (k in torch) ? torch[k] : "-"; p = (k in np) ? np[k] : "-"
                best = ""
                if (t != "-") best = t
                if (p != "-" && (best == "" || p + 0 < best + 0)) best = p
                ratio = "-"
                if (best != "" && best + 0 > 0) ratio = sprintf("%.2f", ms[k] / best)
                printf "%-14s %8s %3s %7s ms %7s ms %7s ms %8s\n", f[1], f[2], thr, ms[k], t, p, ratio
            }
        }' "$mf" "$peer"
done | tee $tmp/table.txt
awk '$NF != "-" && $NF + 0 > 0 {
        l = log($NF); all += l; na++
        if ($2 >= 131072) { big += l; nb++ }
        if ($NF > 1 && $2 >= 131072) slower++
    }
    END {
        if (na == 0) exit
        printf "geometric mean mf/best: %.2f over %d rows; %.2f over the %d rows of 131k and 4M " \
               "elements (target <= 0.7), %d of them slower than the faster peer\n",
               exp(all / na), na, (nb ? exp(big / nb) : 0), nb, slower
    }' $tmp/table.txt
# the GELU-MLP block: eager, traced, traced with fusion, PyTorch (bench/fusion.sh)
if [ $# -eq 0 ]; then sh bench/fusion.sh "$build"; fi
