#!/usr/bin/python3
"""circles.py -- circles of calls between the C files of a folder.

    tools/circles.py [--known FILE] BUILD FOLDER...

The call graph is read from the object files, so it is exact for what the
compiler emitted: file A calls file B when A.o has an undefined symbol that
B.o defines as a function (nm types T and W). Static functions and static
inline helpers of headers do not appear in nm and do not make edges. The
objects are BUILD/FOLDER/NAME.o for each FOLDER/NAME.c in the source tree, so
a stale object of a moved file is not read.

A circle is a strongly connected component of more than one file (A calls B
and B, directly or through others, calls A). Every circle is printed with the
calls that close it. With --known, each line of FILE is one known circle
(its files, separated by spaces; '#' starts a comment): the exit status is 1
when a circle is found that is not listed exactly, or when a listed circle no
longer exists (remove it from the list: the list only shrinks).
"""
import os
import subprocess
import sys


def nm_symbols(obj):
    """(defined functions, undefined symbols) of one object file."""
    out = subprocess.run(["nm", "-P", obj], check=True, capture_output=True,
                         text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        name, kind = fields[0], fields[1]
        if kind in ("T", "W"):
            defined.add(name)
        elif kind == "U":
            undefined.add(name)
    return defined, undefined


def folder_graph(build, folder):
    """{file: {callee file: [symbols]}} for the .c files directly in folder."""
    files = sorted(f for f in os.listdir(folder) if f.endswith(".c"))
    defined_by, needs = {}, {}
    for f in files:
        path = os.path.join(folder, f)
        obj = os.path.join(build, folder, f[:-2] + ".o")
        if not os.path.exists(obj):
            sys.exit("circles.py: no object %s for %s (build first)" % (obj, path))
        defined, undefined = nm_symbols(obj)
        needs[path] = undefined
        for sym in defined:
            defined_by[sym] = path
    graph = {}
    for path, undefined in needs.items():
        edges = {}
        for sym in sorted(undefined):
            callee = defined_by.get(sym)
            if callee and callee != path:
                edges.setdefault(callee, []).append(sym)
        graph[path] = edges
    return graph


def components(graph):
    """Tarjan's strongly connected components, iteratively (no recursion limit)."""
    index, low, on_stack, stack, result = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    comp.append(member)
                    if member == node:
                        break
                result.append(sorted(comp))
    return result


def read_known(path):
    known = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if line:
                known.append(frozenset(line))
    return known


def print_circle(graph, comp):
    print("circle of %d files: %s" % (len(comp), " ".join(comp)))
    members = set(comp)
    for caller in comp:
        for callee, syms in sorted(graph[caller].items()):
            if callee in members:
                shown = ", ".join(syms[:4]) + (", ..." if len(syms) > 4 else "")
                print("    %s -> %s: %s" % (caller, callee, shown))


def main(argv):
    known_path = None
    if len(argv) > 2 and argv[1] == "--known":
        known_path = argv[2]
        argv = argv[:1] + argv[3:]
    if len(argv) < 3:
        sys.exit(__doc__)
    build, folders = argv[1], argv[2:]
    found = []
    for folder in folders:
        graph = folder_graph(build, folder.rstrip("/"))
        circles = [c for c in components(graph) if len(c) > 1]
        print("%s: %d files, %d circle(s)" % (folder, len(graph), len(circles)))
        for comp in circles:
            print_circle(graph, comp)
            found.append(frozenset(comp))
    if known_path is None:
        return 1 if found else 0
    known = read_known(known_path)
    status = 0
    for comp in found:
        if comp not in known:
            print("NEW circle (not in %s): %s" % (known_path, " ".join(sorted(comp))))
            status = 1
    checked = [f.rstrip("/") for f in folders]
    for comp in known:
        folder = os.path.dirname(sorted(comp)[0])
        if folder in checked and comp not in found:
            print("GONE circle, remove it from %s: %s" % (known_path, " ".join(sorted(comp))))
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
