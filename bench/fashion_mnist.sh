#!/bin/sh
# fashion_mnist.sh BUILD — issue #32's benchmark: one epoch of Keras's simple
# convnet on Fashion-MNIST's 60,000 training images (batch 128, Adam), moonflow
# eager and traced (bench/fashion_mnist.lua) beside PyTorch
# (bench/torch_fashion_mnist.py, the same model in NCHW) on 1 and 2 threads;
# one epoch per row (each is 469 steps), and the time to load the images.
# MF_BENCH_FMNIST_IMAGES=n cuts the epoch to n images. Called by bench/run.sh.
build=${1:-build/release}
max=${MF_BENCH_FMNIST_IMAGES:-}
if [ ! -d /usr/share/datasets/fashion-mnist ]; then
    echo "(Fashion-MNIST not installed: apt-get install dataset-fashion-mnist)"
    exit 0
fi
torch_ok=0
/usr/bin/python3 -c "import torch" 2>/dev/null && torch_ok=1
echo
echo "== Fashion-MNIST convnet, one epoch of ${max:-60000} images, batch 128 (seconds) =="
printf "%-10s %10s %10s %10s %10s %10s\n" "threads" "eager" "traced" "PyTorch" "mf/torch" \
    "load mf/pt"
for threads in 1 2; do
    out=/tmp/mf_bench_fmnist_$threads.txt
    : > "$out"
    for mode in eager traced; do
        OPENBLAS_NUM_THREADS=$threads "$build/moonflow" bench/fashion_mnist.lua $mode $max \
            >> "$out" 2>/dev/null || echo "epoch $mode -" >> "$out"
    done
    [ $torch_ok = 1 ] && OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_fashion_mnist.py \
        "$threads" $max 2>/dev/null | sed 's/^load/tload/' >> "$out"
    awk -v thr="$threads" '
        $1 == "epoch" { t[$2] = $3 }
        $1 == "load" && !mfload { mfload = $2 }
        $1 == "tload" { ptload = $2 }
        END {
            pt = ("torch" in t) ? t["torch"] : "-"
            best = t["traced"]
            if (t["eager"] != "-" && (best == "-" || t["eager"] + 0 < best + 0)) best = t["eager"]
            ratio = (pt != "-" && best != "-") ? sprintf("%.2f", t["traced"] / pt) : "-"
            printf "%-10s %10s %10s %10s %10s %5s/%s\n", thr, t["eager"], t["traced"], pt, ratio,
                   mfload, (ptload == "" ? "-" : ptload)
        }' "$out"
done
echo "(mf/torch: traced over PyTorch; below 1 moonflow is faster; target <= 0.67, 1.5x faster)"
