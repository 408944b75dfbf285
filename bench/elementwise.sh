#!/bin/sh
# elementwise.sh BUILD [ROW...] — issue 29's elementwise table: every row of
# bench/elementwise.lua (moonflow) beside bench/elementwise_peer.py (PyTorch
# and NumPy) at 4,096, 131,072 and 4,194,304 float32 elements, on 1 and 2
# threads; medians; the ratio to the faster peer (below 1: moonflow is
# faster) and the geometric mean of the ratios (all rows, and the 131k and
# 4M rows the targets are about). Called by bench/run.sh; ROW names
# run only those rows. Rows are added in the .lua and the .py, not here.
# ROUNDS (default 3): moonflow and the peers run alternately that many times
# per thread count and each column is the median of its rounds: this
# machine's speed drifts by tens of percent within minutes, and a table taken
# in one pass compared moonflow in one state with the peers in another.
build=${1:-build/release}
rounds=${ROUNDS:-3}
[ $# -gt 0 ] && shift
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo
echo "== elementwise ops, float32 (CPU: $cpu; OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}; medians of $rounds alternating rounds) =="
peer_ok=0
/usr/bin/python3 -c "import torch, numpy" 2>/dev/null && peer_ok=1
[ $peer_ok = 1 ] || echo "(PyTorch or NumPy not found: apt-get install python3-torch)"
printf "%-14s %8s %3s %10s %10s %10s %8s\n" "op" "n" "thr" "moonflow" "PyTorch" "NumPy" "mf/best"
# Intermediate files of this run only: two runs at once must not mix tables.
tmp=$(mktemp -d /tmp/mf_bench_elementwise.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
for threads in 1 2; do
    r=1
    while [ $r -le "$rounds" ]; do
        OPENBLAS_NUM_THREADS=$threads "$build/moonflow" bench/elementwise.lua "$threads" "$@" \
            > "$tmp/mf_${threads}_$r.txt" || exit 1
        : > "$tmp/peer_${threads}_$r.txt"
        if [ $peer_ok = 1 ]; then
            OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/elementwise_peer.py "$threads" "$@" \
                > "$tmp/peer_${threads}_$r.txt" 2>/dev/null
        fi
        r=$((r + 1))
    done
    # moonflow's rows in the order of its first round, each column the median
    # of the rounds' figures for the same (name, n)
    awk -v thr="$threads" '
        function median(k, col,    a, n, i, j, t) {
            n = cnt[col, k]
            for (i = 1; i <= n; i++) a[i] = v[col, k, i]
            for (i = 2; i <= n; i++)
                for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
            return a[int((n + 1) / 2)]
        }
        function add(col, k, x) { if (x != "-") v[col, k, ++cnt[col, k]] = x }
        FILENAME !~ /\/peer_[0-9]+_[0-9]+\.txt$/ {
            k = $1 " " $2
            if (!(k in seen)) { seen[k] = 1; key[++rows] = k }
            add("mf", k, $3); next
        }
        { k = $1 " " $2; add("torch", k, $3); add("np", k, $4) }
        END {
            for (i = 1; i <= rows; i++) {
                k = key[i]; split(k, f, " ")
                m = median(k, "mf")
                t = cnt["torch", k] ? median(k, "torch") : "-"
                p = cnt["np", k] ? median(k, "np") : "-"
                best = ""
                if (t != "-") best = t
                if (p != "-" && (best == "" || p + 0 < best + 0)) best = p
                ratio = "-"
                if (best != "" && best + 0 > 0) ratio = sprintf("%.2f", m / best)
                printf "%-14s %8s %3s %7s ms %7s ms %7s ms %8s\n", f[1], f[2], thr, m, t, p, ratio
            }
        }' "$tmp"/mf_${threads}_*.txt "$tmp"/peer_${threads}_*.txt
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
