#!/bin/sh
# prompt_check.sh [BUILD] — drives the interactive moonflow prompt in a tmux
# session and checks what a user sees: the banner, printed values,
# multi-line input, Ctrl-C interrupting a running loop (and clearing a typed
# line), tab completion, persistent history and Ctrl-D exiting.
# Needs tmux; not part of 'make test' (it depends on a terminal multiplexer
# and on timing). Exit status 0 when every check passes.
build=${1:-build/release}
bin="$(pwd)/$build/moonflow"
session="mf_prompt_check_$$"
hist=$(mktemp)
failed=0

command -v tmux > /dev/null || { echo "prompt_check: tmux is not installed"; exit 2; }
[ -x "$bin" ] || { echo "prompt_check: no $bin (build it first)"; exit 2; }

type_text() { tmux send-keys -t "$session" -l "$1"; }
keys() { tmux send-keys -t "$session" "$@"; }
pane() { tmux capture-pane -p -t "$session" 2>/dev/null; }

# Waits (up to 10 s) until the pane shows the fixed string $2 (with $3 =
# -x: as a whole line); reports $1. tmux drops trailing blanks.
expect() {
    i=0
    while [ $i -lt 100 ]; do
        if pane | grep -qF ${3:-} -- "$2"; then
            echo "ok   $1"
            return 0
        fi
        sleep 0.1
        i=$((i + 1))
    done
    echo "FAIL $1: the pane does not show '$2'"
    pane | sed 's/^/    | /' | grep -v '^    | $'
    failed=$((failed + 1))
    return 1
}

rm -f "$hist"
tmux new-session -d -s "$session" -x 120 -y 60 \
    "env MOONFLOW_HISTORY='$hist' OPENBLAS_NUM_THREADS=1 '$bin'; echo EXIT=\$?; sleep 30"
trap 'tmux kill-session -t "$session" 2> /dev/null; rm -f "$hist"' EXIT

expect "banner" "Type help() for help"
type_text 'x = mf.tensor{{1,2},{3,4}}'; keys Enter
type_text 'x'; keys Enter
expect "a tensor value is printed" "shape=(2,2), dtype=float32"
type_text 'x.shape'; keys Enter
expect "a table value is printed" "{2, 2}" -x
type_text 'while true do end'; keys Enter
sleep 1
keys C-c
expect "Ctrl-C interrupts running code" "interrupted!"
type_text 'print("still " .. "here")'; keys Enter
expect "the prompt stays after Ctrl-C" "still here"
type_text 'for i = 1, 3 do'; keys Enter
expect "continuation prompt" ">>" -x
type_text 'io.write(i * 11, " ")'; keys Enter
type_text 'end'; keys Enter
expect "multi-line input runs" "11 22 33"
type_text 'mf.matmul(x, mf.ones{3,3})'; keys Enter
expect "errors are printed with a traceback" "stack traceback:"
type_text 'half typed line'; keys C-c
expect "Ctrl-C clears a typed line" "half typed line^C"
type_text 'mf.rand'; keys Tab
type_text 'nor'; keys Tab
type_text '{5}).shape'; keys Enter
expect "completion of mf.random.normal(" "mf.random.normal({5}).shape"
expect "the completed line runs" "{5}" -x
type_text 'x:resha'; keys Tab
type_text '{4}):totable()'; keys Enter
expect "completion of tensor methods" "{1.0, 2.0, 3.0, 4.0}"
type_text 'x.resha'; keys Tab
type_text '{4}):numel()'; keys Enter
expect "'x.resha' completes to the method call 'x:reshape('" "x:reshape({4}):numel()"
type_text 'mf.data.'; keys Tab Tab
expect "listing a table's names (tables end in '.')" "Dataset.   read_csv("
keys C-u
keys C-d
expect "Ctrl-D exits with status 0" "EXIT=0"
if grep -qF 'for i = 1, 3 do' "$hist"; then
    echo "ok   history is saved to \$MOONFLOW_HISTORY"
else
    echo "FAIL history file $hist lacks the multi-line entry"
    failed=$((failed + 1))
fi

[ $failed -eq 0 ] && echo "prompt_check: all passed" || echo "prompt_check: $failed failed"
[ $failed -eq 0 ]
