# torch_threads.sh — PyTorch's best thread setting for a bench row, sourced
# by bench/char_gpt.sh and bench/train_step.sh.
#
# Debian's torch runs its own kernels on torch.set_num_threads OpenMP
# threads and its GEMMs in OpenBLAS, whose threads OPENBLAS_NUM_THREADS sets
# apart (unset, OpenBLAS starts one per core even under
# torch.set_num_threads(1)). On 2 cores the splits differ by 2x: torch 2 +
# OpenBLAS 2 spin against each other (the char-GPT step took 231 ms there
# against 103 ms on 1 thread, session 12). So a row's PyTorch figure is the
# best of the splits of N threads: torch N + OpenBLAS N, torch N + OpenBLAS
# 1, torch 1 + OpenBLAS N (for N = 1 the one setting).
#
# torch_best N OUT SCRIPT [ARGS...] runs "/usr/bin/python3 SCRIPT T [ARGS...]"
# (T, the torch.set_num_threads count, first) under OPENBLAS_NUM_THREADS=B
# for each split T+B. SCRIPT prints lines "KEY... MS". OUT.all gets every
# line with its split appended ("torch2+blas1"); OUT one line per KEY,
# "KEY... MS SPLIT", with the least MS over the splits. Fails when no
# split printed anything.
torch_best() {
    tb_n=$1 tb_out=$2 tb_script=$3
    shift 3
    : > "$tb_out.all"
    tb_splits="$tb_n:$tb_n"
    [ "$tb_n" -gt 1 ] && tb_splits="$tb_n:$tb_n $tb_n:1 1:$tb_n"
    for tb_s in $tb_splits; do
        tb_t=${tb_s%:*} tb_b=${tb_s#*:}
        OPENBLAS_NUM_THREADS=$tb_b /usr/bin/python3 "$tb_script" "$tb_t" "$@" 2>/dev/null |
            awk -v s="torch$tb_t+blas$tb_b" '{print $0, s}' >> "$tb_out.all"
    done
    # per KEY (every field but the last two), the least MS and its split
    awk '{key = $1; for (i = 2; i <= NF - 2; i++) key = key " " $i
          if (!(key in best)) order[n++] = key
          if (!(key in best) || $(NF - 1) + 0 < best[key] + 0) {
              best[key] = $(NF - 1); split_of[key] = $NF }}
         END {for (i = 0; i < n; i++) print order[i], best[order[i]], split_of[order[i]]}' \
        "$tb_out.all" > "$tb_out"
    [ -s "$tb_out" ]
}

# torch_splits OUT KEY: "split MS, split MS, ..." of KEY's lines in OUT.all.
torch_splits() {
    awk -v k="$2" '{key = $1; for (i = 2; i <= NF - 2; i++) key = key " " $i
                    if (key == k) s = s (s ? ", " : "") $NF " " $(NF - 1)}
                   END {print s}' "$1.all"
}
