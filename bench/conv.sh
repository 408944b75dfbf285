#!/bin/sh
# conv.sh BUILD — the convolution table of `make bench`: the four layers
# (a: 32x28x28 1->32, b: 32x28x28 32->64, c: 16x56x56 64->64, d: 8x14x14
# 256->256; 3x3 SAME, NHWC float32), forward / backprop-input /
# backprop-filter, on 1 and 2 threads. Per pass: moonflow's median ms
# (bench/conv.lua), GEMM-equivalent GFLOP/s and % of the SGEMM peak measured
# in the same process, PyTorch's default (oneDNN) and im2col
# (mkldnn.enabled = False) backends (bench/torch_conv.py, same run), and
# mf/best = moonflow ms / the faster PyTorch ms (below 1: moonflow faster).
# Then the issue #18 targets, each said met or not.
# CORES="Haswell auto" repeats the table with OPENBLAS_CORETYPE=Haswell and
# with it unset (auto: OpenBLAS picks the core); default: the environment's.
# PyTorch comes from Debian's python3-torch, installed here when missing and
# run as root (never in make test).
build=${1:-build/release}
runs=${CONV_RUNS:-9}
py=/usr/bin/python3
if ! $py -c "import torch" 2>/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null
then
    echo "conv.sh: installing python3-torch for the side-by-side" >&2
    { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-torch ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        python3-torch; }; } >/dev/null 2>&1
fi
torch_ok=0
$py -c "import torch" 2>/dev/null && torch_ok=1

table() { # $1 threads, $2 moonflow output, $3 torch output
    awk -v threads="$1" -v tok="$torch_ok" '
    FNR == NR { if ($1 == "conv") { key = $2 " " $3; mf[key] = $4; gf[key] = $5; pp[key] = $6
                                    order[++n] = key }
                if ($1 == "peak") peak = $2; next }
    $1 == "torch" { t[$2 " " $3 " " $4] = $5 }
    END {
        split("a b c d", short, " ")
        printf "\nconvolutions, %d thread(s), SGEMM peak %.1f GFLOP/s (medians)\n", threads, peak
        printf "%-2s %-16s %9s %8s %6s %11s %11s %8s\n", "", "pass", "mf ms", "GFLOP/s",
               "%peak", "torch dflt", "torch i2c", "mf/best"
        worst = 0
        for (i = 1; i <= n; i++) {
            key = order[i]; split(key, kp, " ")
            li = int((i - 1) / 3) + 1
            d = t["default " key]; c = t["im2col " key]
            best = (d != "" && (c == "" || d + 0 < c + 0)) ? d : c
            ratio = best != "" ? sprintf("%.2f", mf[key] / best) : "-"
            if (best != "") {
                summf += mf[key]; sumt += best
                if (mf[key] / best > worst) worst = mf[key] / best
            }
            if (li > 1 && (!seen || gf[key] / peak < minp)) { minp = gf[key] / peak; seen = 1 }
            printf "%-2s %-16s %9.3f %8.1f %5s%% %11s %11s %8s\n", short[li], kp[2], mf[key],
                   gf[key], pp[key], d == "" ? "-" : d, c == "" ? "-" : c, ratio
        }
        if (sumt > 0) {
            printf "all passes: moonflow %.2f ms, PyTorch best %.2f ms: %.2fx faster " \
                   "(target 1.5x: %s)\n", summf, sumt, sumt / summf,
                   (sumt / summf >= 1.5 ? "met" : "NOT met")
            printf "slowest pass: mf/best %.2f (target at most 1.1: %s)\n", worst,
                   (worst <= 1.1 ? "met" : "NOT met")
        }
        printf "layers b-d: lowest effective GFLOP/s / peak %.2f (target 1.2: %s)\n", minp,
               (minp >= 1.2 ? "met" : "NOT met")
    }' "$2" "$3"
}

for core in ${CORES:-env}; do
    case $core in
        env) ;;
        auto) unset OPENBLAS_CORETYPE ;;
        *) export OPENBLAS_CORETYPE=$core ;;
    esac
    corename=$("$build/moonflow" -e 'print(mf.config().corename)' 2>/dev/null)
    echo
    echo "== convolutions: OpenBLAS core ${corename:-?}" \
         "(OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}), $(grep -m1 'model name' \
         /proc/cpuinfo | sed 's/.*: //'), $(date -u +%H:%M) UTC =="
    for threads in 1 2; do
        mfout=/tmp/mf_bench_conv_$threads.txt
        tout=/tmp/mf_bench_torch_conv_$threads.txt
        OPENBLAS_NUM_THREADS=$threads "$build/moonflow" bench/conv.lua "" "$runs" > "$mfout"
        : > "$tout"
        if [ $torch_ok = 1 ]; then
            OPENBLAS_NUM_THREADS=$threads $py bench/torch_conv.py "$threads" "$runs" \
                > "$tout" 2>/dev/null
        fi
        table "$threads" "$mfout" "$tout"
    done
done
[ $torch_ok = 1 ] || echo "(PyTorch not found: apt-get install python3-torch for the side-by-side)"
