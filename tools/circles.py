#!/usr/bin/python3
"""circles.py -- circles of calls between the C files of a folder.

    tools/circles.py [--known FILE] [--floors FILE] BUILD FOLDER...

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

With --floors, FILE is a folder's floor plan: lines "N name: file.c ...",
floor 0 at the bottom. The exit status is 1 when a file of that folder is on
no floor, when a file calls one on a higher floor, or when a file of floor 0
includes a header of the folder other than those of floor 0's files.
"""
import re
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


def read_floors(path):
    """{file: floor number} from a floor plan ("N name: files", continued on
    the lines below until the next floor)."""
    floors, current = {}, None
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0]
            m = re.match(r"(\d+)\s+[^:]*:(.*)", line)
            if m:
                current, line = int(m.group(1)), m.group(2)
            for name in line.split():
                floors[name] = current
    return floors


def local_includes(path):
    """The headers of path's own folder that path includes ("x.h" or "dir/x.h")."""
    folder = os.path.dirname(path)
    found = []
    with open(path) as f:
        for line in f:
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            inc = m.group(1)
            if "/" not in inc:
                inc = os.path.join(folder, inc)
            if os.path.dirname(inc) == folder:
                found.append(inc)
    return found


def check_floors(graph, floors, plan):
    """Prints each break of the floor plan; returns how many there are."""
    breaks = 0
    for path in sorted(graph):
        if path not in floors:
            print("%s is on no floor of %s (add it to the floor it belongs to)" % (path, plan))
            breaks += 1
    bottom = {p[:-2] + ".h" for p, n in floors.items() if n == 0}
    for path in sorted(graph):
        mine = floors.get(path)
        if mine is None:
            continue
        for callee, syms in sorted(graph[path].items()):
            if floors.get(callee, -1) > mine:
                print("%s (floor %d) calls up into %s (floor %d): %s"
                      % (path, mine, callee, floors[callee], ", ".join(syms[:4])))
                breaks += 1
        if mine == 0:
            for inc in local_includes(path):
                if inc not in bottom:
                    print("%s (floor 0) includes %s, above floor 0" % (path, inc))
                    breaks += 1
    return breaks


def print_circle(graph, comp):
    print("circle of %d files: %s" % (len(comp), " ".join(comp)))
    members = set(comp)
    for caller in comp:
        for callee, syms in sorted(graph[caller].items()):
            if callee in members:
                shown = ", ".join(syms[:4]) + (", ..." if len(syms) > 4 else "")
                print("    %s -> %s: %s" % (caller, callee, shown))


def main(argv):
    known_path = floors_path = None
    while len(argv) > 2 and argv[1] in ("--known", "--floors"):
        if argv[1] == "--known":
            known_path = argv[2]
        else:
            floors_path = argv[2]
        argv = argv[:1] + argv[3:]
    if len(argv) < 3:
        sys.exit(__doc__)
    build, folders = argv[1], argv[2:]
    found = []
    floors = read_floors(floors_path) if floors_path else {}
    breaks = 0
    for folder in folders:
        graph = folder_graph(build, folder.rstrip("/"))
        if floors and any(f.startswith(folder.rstrip("/") + "/") for f in floors):
            breaks += check_floors(graph, floors, floors_path)
        circles = [c for c in components(graph) if len(c) > 1]
        print("%s: %d files, %d circle(s)" % (folder, len(graph), len(circles)))
        for comp in circles:
            print_circle(graph, comp)
            found.append(frozenset(comp))
    if known_path is None:
        return 1 if found or breaks else 0
    known = read_known(known_path)
    status = 1 if breaks else 0
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
