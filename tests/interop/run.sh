#!/bin/sh
# run.sh BUILD — `make interop`: models exported by moonflow run in
# onnxruntime with outputs equal to moonflow's (within 1e-5).
#   1. onnxruntime-node (pinned) from the npm registry into BUILD/interop,
#      with install scripts disabled; its native CPU library ships in the
#      package tarball (checked: no download at install time). A runtime
#      that cannot be installed fails this target, never skips it.
#   2. tests/interop/onnx_models.lua exports a traced MLP, the digits CNN
#      (sklearn's 8x8 digits from python3-sklearn, else synthetic ones) and
#      the CNN as a graph with an unknown batch size, with their inputs and
#      moonflow's outputs.
#   3. check_onnx.py (checker + strict shape inference), then ort_compare.js.
set -eu
build=${1:-build/release}
ORT_VERSION=1.20.1
dir="$build/interop"
mkdir -p "$dir/models"

installed=$(node -p "try { require('./$dir/node_modules/onnxruntime-node/package.json').version }
                     catch (e) { '' }" 2>/dev/null || true)
if [ "$installed" != "$ORT_VERSION" ]; then
    echo "interop: npm install onnxruntime-node@$ORT_VERSION (scripts disabled) into $dir"
    echo '{"name": "moonflow-interop", "private": true}' > "$dir/package.json"
    if ! (cd "$dir" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error \
              "onnxruntime-node@$ORT_VERSION"); then
        echo "interop: FAIL: cannot install onnxruntime-node@$ORT_VERSION from the npm registry" >&2
        exit 1
    fi
fi
arch=$(node -p process.arch)
native="$dir/node_modules/onnxruntime-node/bin/napi-v3/linux/$arch"
for f in onnxruntime_binding.node "libonnxruntime.so.$ORT_VERSION"; do
    if [ ! -f "$native/$f" ]; then
        echo "interop: FAIL: the onnxruntime-node package has no $native/$f" >&2
        exit 1
    fi
done

digits=/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz
csv=
if [ -f "$digits" ]; then
    csv="$dir/digits.csv"
    gzip -dc "$digits" > "$csv"
fi
OPENBLAS_NUM_THREADS=1 "$build/moonflow" tests/interop/onnx_models.lua "$dir/models" $csv

status=0
for m in mlp cnn cnn_graph ops layers rnn attention; do
    /usr/bin/python3 tests/interop/check_onnx.py "$dir/models/$m.onnx" || status=1
    ORT_DIR="$dir" node tests/interop/ort_compare.js "$dir/models/$m.onnx" \
        "$dir/models/${m}_in.safetensors" "$dir/models/${m}_out.safetensors" 1e-5 || status=1
done
[ "$status" = 0 ] &&
    echo "interop: every model runs in onnxruntime $ORT_VERSION with moonflow's outputs"
exit $status
