#!/bin/sh
# test_deps.sh [interop|bench] — the Debian packages the tests need beyond the
# build: the independent readers of moonflow's interchange files
# (python3-protobuf and python3-crcmod read TensorBoard event files,
# python3-onnx checks ONNX models), the Jupyter kernel's test drivers
# (python3-pytest, python3-jupyter-client, python3-jupyter-kernel-test,
# python3-nbclient and python3-nbformat), 'locales' (a comma-decimal locale
# for test_locale.lua), lua5.4 and luarocks (test_module.lua) and
# dataset-fashion-mnist and fortunes (test_datasets.lua). 'interop' adds what `make
# interop` needs: Node.js and npm (onnxruntime comes from the npm registry)
# and python3-sklearn (its 8x8 digits); 'bench' adds the peers `make bench`
# times moonflow against (python3-torch, python3-numpy). Missing packages are
# installed with apt-get when run as root; otherwise the apt-get line is
# printed and the script fails.
set -u

# Debian package : the Python module it provides
checks="python3-protobuf:google.protobuf python3-crcmod:crcmod python3-onnx:onnx \
python3-pytest:pytest python3-jupyter-client:jupyter_client \
python3-jupyter-kernel-test:jupyter_kernel_test python3-nbclient:nbclient \
python3-nbformat:nbformat"
[ "${1:-}" = interop ] && checks="$checks python3-sklearn:sklearn"
[ "${1:-}" = bench ] && checks="$checks python3-torch:torch python3-numpy:numpy"

missing=""
[ -x /usr/bin/python3 ] || missing="python3"
for c in $checks; do
    deb=${c%%:*}
    [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import ${c#*:}" 2>/dev/null ||
        missing="$missing $deb"
done
# test_module.lua loads build/moonflow.so in a stock lua5.4, and builds the
# rockspec with luarocks
command -v lua5.4 >/dev/null 2>&1 || missing="$missing lua5.4"
command -v luarocks >/dev/null 2>&1 || missing="$missing luarocks"
# test_datasets.lua and scripts/fashion_mnist_cnn.lua read Fashion-MNIST
[ -d /usr/share/datasets/fashion-mnist ] || missing="$missing dataset-fashion-mnist"
# mf.datasets.fortunes (the char scripts' default corpus) reads Debian's fortunes
[ -f /usr/share/games/fortunes/zippy ] || missing="$missing fortunes"
# test_locale.lua builds a de_DE.UTF-8 locale with localedef from its source
[ -f /usr/share/i18n/locales/de_DE ] || missing="$missing locales"
if [ "${1:-}" = interop ]; then
    command -v node >/dev/null 2>&1 || missing="$missing nodejs"
    command -v npm >/dev/null 2>&1 || missing="$missing npm"
fi

[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test_deps: installing:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    { apt-get install -y -qq $missing || { apt-get update -qq && apt-get install -y -qq $missing; }
    } >&2 || { echo "test_deps: apt-get install failed" >&2; exit 1; }
    exit 0
fi
echo "test_deps: the tests need Debian packages. Install them with:" >&2
echo "    sudo apt-get install -y$missing" >&2
exit 1
