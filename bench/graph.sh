#!/bin/sh
# graph.sh BUILD — graph mode: the in-degree executor's cost per node (a
# chain of 1000 AddV2 or Identity nodes on 1-element float32 tensors, one
# sess:run divided by 1000; target < 1 us), and a 20-op chain of 1-element
# tensors per call: eager, sess:run of the same graph, and mf.trace
# (bench/graph.lua). PyTorch: torch.jit.trace of the same chains and the
# eager chain (bench/torch_graph.py). Called by bench/run.sh; one thread;
# medians of 7 runs; each mode in a fresh process.
build=${1:-build/release}
export OPENBLAS_NUM_THREADS=1
{
    "$build/moonflow" bench/graph.lua exec
    "$build/moonflow" bench/graph.lua chain
} > /tmp/mf_bench_graph.txt || exit 1
torch_ok=0
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
    /usr/bin/python3 bench/torch_graph.py > /tmp/mf_bench_torch_graph.txt && torch_ok=1
fi
while read -r key us; do
    t="-"; ratio="-"
    if [ $torch_ok = 1 ]; then
        t=$(awk -v k="$key" '$1 == k {print $2}' /tmp/mf_bench_torch_graph.txt)
        [ -n "$t" ] && ratio=$(awk -v a="$us" -v b="$t" 'BEGIN {printf "%.2f", a / b}')
        [ -n "$t" ] || t="-"
    fi
    case $key in
        exec_add) label="graph: per AddV2 node" ;;
        exec_identity) label="graph: per Identity node" ;;
        chain_eager) label="20-op chain: eager call" ;;
        chain_session) label="20-op chain: sess:run" ;;
        *) label="20-op chain: traced call" ;;
    esac
    printf "%-28s %9s us %9s us %10s\n" "$label" "$us" "$t" "$ratio"
done < /tmp/mf_bench_graph.txt
awk '{v[$1] = $2} END {
    printf "  per node %.3f us (target < 1 us); ", v["exec_add"]
    if ("chain_trace" in v)
        printf "traced / eager call %.2fx\n", v["chain_trace"] / v["chain_eager"]
    else
        printf "no mf.trace: sess:run / eager call %.2fx\n", v["chain_session"] / v["chain_eager"]
}' /tmp/mf_bench_graph.txt
[ $torch_ok = 1 ] &&
    echo "  (PyTorch: torch.jit.trace for the graph and traced rows, eager for the eager row)"
exit 0
