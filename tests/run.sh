#!/bin/sh
# run.sh BUILD — runs every cmocka program in BUILD/tests and every Lua API
# test in tests/lua (and tests/lua/ports) with BUILD/moonflow; prints one line per test program
# and a closing "N passed, N failed".
build=${1:-build/release}
passed=0
failed=0
failed_names=""
log_dir="$build/test-logs"
mkdir -p "$log_dir"

run_one() {
    name=$1
    shift
    if "$@" > "$log_dir/$name.log" 2>&1; then
        passed=$((passed + 1))
        echo "PASS $name"
    else
        failed=$((failed + 1))
        failed_names="$failed_names $name"
        echo "FAIL $name"
        sed 's/^/    /' "$log_dir/$name.log" | tail -40
    fi
}

for t in "$build"/tests/test_*; do
    [ -x "$t" ] || continue
    run_one "$(basename "$t")" "$t"
done
# tests/lua/ports/: public TensorFlow / PyTorch programs ported line by line
for t in tests/lua/test_*.lua tests/lua/ports/test_*.lua; do
    [ -f "$t" ] || continue
    run_one "$(basename "$t" .lua)" "$build/moonflow" "$t"
done

# the Jupyter kernel (kernel/) through python3-pytest: the protocol
# conformance tests, the raw protocol and the notebooks in examples/
run_one test_kernel env MOONFLOW="$build/moonflow" /usr/bin/python3 -m pytest -q \
    -p no:cacheprovider tests/kernel

# tests/tools/: checks of the source tree itself (circles of calls, ...)
for t in tests/tools/test_*.sh; do
    [ -f "$t" ] || continue
    run_one "$(basename "$t" .sh)" sh "$t" "$build"
done

echo
[ -n "$failed_names" ] && echo "failed:$failed_names"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
