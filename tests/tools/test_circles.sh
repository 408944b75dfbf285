#!/bin/sh
# test_circles.sh BUILD — no circle of calls between the files of repl/,
# graph/ or train/ beyond the shrinking list tools/circles_known.txt
# (issue #34, "Done when"), and repl/ keeps its floor plan
# (tools/repl_floors.txt, doc/design.md "The floors of repl/"). First proves
# on three made-up files that the checker finds a circle, that the known
# list refuses a new or a gone one, and that the floor plan refuses a file on
# no floor, a call up a floor and an include up from floor 0.
build=${1:-build/release}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$tmp/src/x" "$tmp/build/x"
printf 'int b(int);\nint a(int n);\nint a(int n) { return n ? b(n - 1) : 0; }\n' > "$tmp/src/x/a.c"
printf 'int a(int);\nint b(int n);\nint b(int n) { return n ? a(n - 1) : 1; }\n' > "$tmp/src/x/b.c"
printf 'int a(int);\nint c(void);\nint c(void) { return a(3); }\n' > "$tmp/src/x/c.c"
for f in a b c; do
    cc -c "$tmp/src/x/$f.c" -o "$tmp/build/x/$f.o" || fail "cc $f.c"
done
here=$(pwd)
cd "$tmp/src" || exit 1
out=$(/usr/bin/python3 "$here/tools/circles.py" ../build x) && fail "a circle passed: $out"
echo "$out" | grep -q '^circle of 2 files: x/a.c x/b.c$' || fail "circle not named: $out"
echo "$out" | grep -q 'x/a.c -> x/b.c: b' || fail "call not shown: $out"
echo 'x/a.c x/b.c' > ../known
/usr/bin/python3 "$here/tools/circles.py" --known ../known ../build x > /dev/null \
    || fail "a known circle failed"
echo 'x/a.c x/c.c' >> ../known
/usr/bin/python3 "$here/tools/circles.py" --known ../known ../build x | grep -q '^GONE' \
    || fail "a gone circle passed"
echo 'x/a.c x/b.c x/c.c' > ../known
/usr/bin/python3 "$here/tools/circles.py" --known ../known ../build x | grep -q '^NEW' \
    || fail "a circle other than the known one passed"
printf '0 low: x/c.c\n1 high: x/a.c\n' > ../floors
out=$(/usr/bin/python3 "$here/tools/circles.py" --floors ../floors ../build x) \
    && fail "a broken floor plan passed: $out"
echo "$out" | grep -q '^x/b.c is on no floor' || fail "a file on no floor passed: $out"
echo "$out" | grep -q '^x/c.c (floor 0) calls up into x/a.c (floor 1): a$' \
    || fail "a call up a floor passed: $out"
printf '#include "a.h"\n' >> x/c.c
out=$(/usr/bin/python3 "$here/tools/circles.py" --floors ../floors ../build x)
echo "$out" | grep -q '^x/c.c (floor 0) includes x/a.h, above floor 0$' \
    || fail "floor 0 including a header above it passed: $out"
cd "$here" || exit 1

/usr/bin/python3 tools/circles.py --known tools/circles_known.txt \
    --floors tools/repl_floors.txt "$build" repl graph train present autodiff mode
