#!/bin/sh
# embed_lua.sh FILE — prints FILE (a Lua source) as C string literals, one
# per line of FILE and each followed by a comma, for an array initializer:
#     static const char *const code[] = {
#     #include "gen/code.inc"
#         NULL,
#     };
# One literal per line keeps every literal far under the 4095 characters
# ISO C requires compilers to accept (-Wpedantic warns beyond that), and
# needs nothing beyond POSIX sh and awk (no xxd; gcc 12 has no #embed).
# A line too long for one literal, or a control character other than tab
# and carriage return, stops with an error naming the file and line.
set -eu

if [ $# -ne 1 ] || [ ! -r "$1" ]; then
    echo "embed_lua.sh: expected one readable Lua file, got '$*'" >&2
    exit 2
fi

printf '/* Generated from %s by tools/embed_lua.sh: do not edit. */\n' "$1"
# LC_ALL=C: awk works on bytes, so UTF-8 text passes through unchanged.
LC_ALL=C awk -v file="$1" '
function fail(msg) {
    printf "embed_lua.sh: %s:%d: %s\n", file, NR, msg > "/dev/stderr"
    failed = 1
    exit 1
}
# Escapes one byte for a C string literal; "?" too, so that no "??x"
# trigraph can form (gcc -std=c11 reads trigraphs).
function escape(c) {
    if (c == "\\") return "\\\\"
    if (c == "\"") return "\\\""
    if (c == "?") return "\\?"
    if (c == "\t") return "\\t"
    if (c == "\r") return "\\r"
    if (c < " " || c == "\177") fail("control character in the Lua source")
    return c
}
{
    if (length($0) + 1 > 4095)
        fail("line of " length($0) " bytes, longer than one C string literal may be (4094)")
    out = ""
    for (i = 1; i <= length($0); i++)
        out = out escape(substr($0, i, 1))
    printf "\"%s\\n\",\n", out
}
END { if (failed) exit 1 }
' "$1"
