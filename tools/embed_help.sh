#!/bin/sh
# embed_help.sh DIR TOPIC... — reads the help topics DIR/TOPIC.txt (in the
# order help() lists them; the format is doc/help/README.md's) and prints
# them as C for repl/help.c: one HELP_TOPIC(name, summary) per file and one
# HELP_ENTRY(name, topic, signature, text, example) per entry, the strings
# as C literals (one per line of the file, far under the 4095 characters
# ISO C requires compilers to accept). "@MF_VERSION@" becomes the macro of
# repl/version.h. A malformed file, a duplicate name or a .txt file of DIR
# that is not a listed topic stops with an error naming the file and line:
# an entry is never dropped. Needs nothing beyond POSIX sh and awk.
set -eu

if [ $# -lt 2 ] || [ ! -d "$1" ]; then
    echo "embed_help.sh: expected a directory and topic names, got '$*'" >&2
    exit 2
fi
dir=$1
shift
files=""
for topic in "$@"; do
    if [ ! -s "$dir/$topic.txt" ]; then
        echo "embed_help.sh: $dir/$topic.txt:1: missing or empty (a topic needs its summary)" >&2
        exit 1
    fi
    files="$files $dir/$topic.txt"
done
for f in "$dir"/*.txt; do
    case " $files " in
    *" $f "*) ;;
    *) echo "embed_help.sh: $f:1: not a topic the Makefile's HELP_TOPICS lists" >&2
       exit 1 ;;
    esac
done

printf '/* Generated from the topics of %s by tools/embed_help.sh: do not edit. */\n' "$dir"
# LC_ALL=C: awk works on bytes, so UTF-8 text passes through unchanged.
# shellcheck disable=SC2086 # $files: the listed paths, one word each
LC_ALL=C awk '
function fail(msg) {
    printf "embed_help.sh: %s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"
    failed = 1
    exit 1
}
# One line as a C string literal; "?" is escaped so that no "??x" trigraph
# forms (gcc -std=c11 reads trigraphs).
function literal(s,    out, i, c) {
    out = ""
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c == "\\") c = "\\\\"
        else if (c == "\"") c = "\\\""
        else if (c == "?") c = "\\?"
        else if (c == "\t") c = "\\t"
        else if (c < " " || c == "\177") fail("control character")
        out = out c
    }
    gsub(/@MF_VERSION@/, "\" MF_VERSION \"", out)
    return "\"" out "\""
}
# The n lines of 'line' as adjacent literals, 'sep' (C source: " " or
# "\\n") ending all but the last.
function literals(line, n, sep,    out, i, one) {
    out = ""
    for (i = 1; i <= n; i++) {
        one = literal(line[i])
        if (i < n)
            one = substr(one, 1, length(one) - 1) sep "\""
        out = out (i > 1 ? "\n    " : "") one
    }
    return out
}
function emit_entry() {
    printf "HELP_ENTRY(%s, %s,\n    %s,\n    %s,\n    %s)\n", literal(name), literal(topic),
           literal(signature), literals(text, ntext, " "), literals(example, nexample, "\\n")
}
# A line ending in "\" continues on the next line, whose indentation goes;
# returns 1 when the logical line, "joined", is complete.
function join(line) {
    if (pending != "")
        sub(/^ +/, "", line)
    if (line ~ /\\$/) {
        pending = pending substr(line, 1, length(line) - 1)
        return 0
    }
    joined = pending line
    pending = ""
    return 1
}
function finish_file() {
    if (state == "head")
        fail("no topic summary (the first paragraph after the # comments)")
    if (state == "about")
        printf "HELP_TOPIC(%s,\n    %s)\n", literal(topic), literals(about, nabout, " ")
    else if (pending != "")
        fail("the last line ends with \\ and nothing follows")
    else if (state == "example")
        emit_entry()
    else if (state != "between")
        fail("the entry \"" name "\" ends before its example")
}
FNR == 1 {
    if (NR > 1)
        finish_file()
    topic = FILENAME
    sub(/^.*\//, "", topic)
    sub(/\.txt$/, "", topic)
    state = "head"
    pending = ""
    nabout = 0
}
/[ \t]$/ { fail("trailing whitespace") }
state == "head" && (/^#/ || /^$/) { next }
(state == "head" || state == "about") && !/^$/ {
    if ($0 ~ /^ /)
        fail("the topic summary is indented")
    about[++nabout] = $0
    state = "about"
    next
}
state == "about" {
    printf "HELP_TOPIC(%s,\n    %s)\n", literal(topic), literals(about, nabout, " ")
    state = "between"
    next
}
state == "between" && /^$/ { next }
state == "between" {
    if ($0 !~ /^== [A-Za-z_][A-Za-z0-9_.]*$/)
        fail("expected \"== name\" (a name such as random.normal) to start an entry")
    name = substr($0, 4)
    if (name in where)
        fail("\"" name "\" has an entry already, at " where[name])
    where[name] = FILENAME ":" FNR
    state = "signature"
    next
}
state == "signature" {
    if ($0 ~ /^$/ || ($0 ~ /^ / && pending == ""))
        fail("expected the signature line of \"" name "\" after its heading")
    if (join($0)) {
        signature = joined
        state = "blank"
    }
    next
}
state == "blank" {
    if ($0 !~ /^$/)
        fail("expected a blank line after the signature of \"" name "\"")
    state = "text"
    ntext = 0
    next
}
state == "text" && /^$/ {
    if (ntext == 0)
        fail("expected the paragraph of \"" name "\", got a second blank line")
    state = "example0"
    nexample = 0
    next
}
state == "text" {
    if ($0 ~ /^ /)
        fail("a paragraph line of \"" name "\" is indented (a blank line goes before the example)")
    text[++ntext] = $0
    next
}
state == "example0" && /^$/ { next }
state == "example" && /^$/ {
    if (pending != "")
        fail("a line ending with \\ is followed by a blank line")
    emit_entry()
    state = "between"
    next
}
state == "example0" || state == "example" {
    if ($0 !~ /^    / && pending == "")
        fail("expected the example of \"" name "\", each line indented by 4 spaces")
    if (join(pending == "" ? substr($0, 5) : $0))
        example[++nexample] = joined
    state = "example"
    next
}
END {
    if (failed)
        exit 1
    finish_file()
    if (failed)
        exit 1
}
' $files
