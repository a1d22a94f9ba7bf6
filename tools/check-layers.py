#!/usr/bin/env python3
"""The layer rules of Stratus, checked on every #include of the tree (docs/architecture.md).

Each source file belongs to the layer of its folder:

  scalar   core/base/include/stratus/core/scalar.hpp: Real and GlobalId, plain C++, for all
  base     core/base/     Kokkos-only types (Stratus::base)
  kernels  kernels/       device code: Kokkos and base only; no allocation, no throw, no I/O;
                          one solver's kernels (kernels/.../md/) do not include another's
  core     core/          host only: no Kokkos, nothing of io, fft or solvers
  device   core/device/   Kokkos's runtime, GPUs, MPI transport, halos (Stratus::device)
  fft      fft/           FFT libraries (FFTW, cuFFT) behind one interface
  io       io/            host only: decks, HDF5, checkpoints; nothing of solvers
  solvers  solvers/       orchestration: everything above
  apps     apps/          the stratus command: everything but third-party FFT libraries

An include of a Stratus header ("stratus/...") is resolved to the file it names and must point
to a layer that the including layer may use; third-party headers (Kokkos, MPI, HDF5, FFTW,
cuFFT, CUDA, toml++, CLI11, fmt) are allowed in the layers listed below only. Kernel headers
must not allocate or throw (`throw`, `Kokkos::realloc`, `Kokkos::resize`, `new`) or include
host-only standard headers (<string>, <vector>, <stdexcept>, streams, ...): host builders live in
the solver layer.

  tools/check-layers.py [--root DIR]    check the tree (exit 0 clean, 1 violations, 2 bad use)
  tools/check-layers.py --self-test     plant one violation of each rule in a copy of the tree
                                        and check that each one is reported with its file:line
"""
import argparse
import os
import re
import shutil
import sys
import tempfile

# Folder prefix -> layer, most specific first.
LAYER_DIRS = [
    ("core/base/include/stratus/core/scalar.hpp", "scalar"),
    ("core/base/", "base"),
    ("core/device/", "device"),
    ("core/", "core"),
    ("kernels/", "kernels"),
    ("fft/", "fft"),
    ("io/", "io"),
    ("solvers/", "solvers"),
    ("apps/", "apps"),
]

# Include directories of each layer's Stratus headers (relative to the root).
INCLUDE_DIRS = [
    "core/base/include",
    "core/device/include",
    "core/include",
    "kernels/include",
    "fft/include",
    "io/include",
    "solvers/include",
]

# Which layers each layer may include.
MAY_USE = {
    "scalar": set(),
    "base": {"base"},
    "kernels": {"kernels", "base"},
    "core": {"core"},
    "device": {"device", "core", "base"},
    "fft": {"fft", "core", "base", "device"},
    "io": {"io", "core"},
    "solvers": {"solvers", "kernels", "base", "core", "device", "fft", "io"},
    "apps": {"apps", "solvers", "kernels", "base", "core", "device", "fft", "io"},
}
for _used in MAY_USE.values():  # the scalar types are everybody's
    _used.add("scalar")

# Third-party headers: a pattern on the included name -> the layers that may include it.
THIRD_PARTY = [
    ("Kokkos", re.compile(r"^(Kokkos_|impl/Kokkos)"), {"base", "kernels", "device", "fft", "solvers", "apps"}),
    ("MPI", re.compile(r"^mpi(-ext)?\.h$"), {"core", "device", "fft", "io", "solvers", "apps"}),
    ("HDF5", re.compile(r"^(hdf5|H5[A-Za-z]*)\.h$"), {"io"}),
    ("FFTW", re.compile(r"^fftw3"), {"fft"}),
    ("cuFFT", re.compile(r"^cufft"), {"fft"}),
    ("the CUDA runtime", re.compile(r"^(cuda_runtime|cuda_runtime_api|cuda)\.h$"), {"device", "fft"}),
    ("toml++", re.compile(r"^toml\+\+/"), {"io"}),
    ("CLI11", re.compile(r"^CLI/"), {"apps"}),
    ("fmt", re.compile(r"^fmt/"), {"core", "device", "fft", "io", "solvers", "apps"}),
]

# Standard headers kernel code has no use for: strings, containers, streams, exceptions, files.
KERNEL_FORBIDDEN_STD = {
    "string", "string_view", "vector", "map", "unordered_map", "set", "unordered_set", "list",
    "deque", "stdexcept", "exception", "iostream", "ostream", "istream", "fstream", "sstream",
    "cstdio", "stdio.h", "filesystem", "memory", "thread", "mutex", "functional", "regex",
}
KERNEL_FORBIDDEN_CODE = [
    (re.compile(r"\bthrow\b"), "throws (a host builder: it belongs in solvers/)"),
    (re.compile(r"\bKokkos::(realloc|resize)\b"), "allocates (a host builder: it belongs in solvers/)"),
    (re.compile(r"\bnew\s+[A-Za-z_]"), "allocates with new"),
]

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
SOURCE_EXT = (".hpp", ".cpp", ".h", ".cu", ".inl")


def layer_of(rel):
    for prefix, layer in LAYER_DIRS:
        if rel.startswith(prefix):
            return layer
    return None


def strip_comments(line, in_block):
    """The code of one line without comments and string literals; in_block: inside /* */."""
    out, i = [], 0
    while i < len(line):
        if in_block:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out), True
            i, in_block = end + 2, False
        elif line.startswith("//", i):
            break
        elif line.startswith("/*", i):
            in_block, i = True, i + 2
        elif line[i] in "\"'":  # a string or character literal: its text is no code
            quote, j = line[i], i + 1
            while j < len(line) and line[j] != quote:
                j += 2 if line[j] == "\\" else 1
            out.append(quote * 2)
            i = j + 1
        else:
            out.append(line[i])
            i += 1
    return "".join(out), in_block


def kernel_family(rel):
    """The solver sub-folder of a kernel header (md, euler, ...), None for a shared one."""
    parts = rel.split("/")
    return parts[4] if len(parts) > 5 else None


def resolve(root, name):
    for d in INCLUDE_DIRS:
        path = os.path.join(root, d, name)
        if os.path.isfile(path):
            return os.path.relpath(path, root)
    return None


def check_tree(root):
    """Every violation as 'file:line: message'."""
    problems = []
    for top in sorted({p.split("/")[0] for p, _ in LAYER_DIRS}):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for fname in sorted(filenames):
                if not fname.endswith(SOURCE_EXT):
                    continue
                path = os.path.join(dirpath, fname)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                layer = layer_of(rel)
                if layer is None:
                    continue
                problems += check_file(root, path, rel, layer)
    return problems


def check_file(root, path, rel, layer):
    problems = []
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    in_block = False
    for number, line in enumerate(lines, start=1):
        where = f"{rel}:{number}"
        m = INCLUDE_RE.match(line)
        if m and not in_block:
            name = m.group(2)
            if name.startswith("stratus/"):
                target = resolve(root, name)
                if target is None:
                    problems.append(f"{where}: includes \"{name}\", which is no Stratus header "
                                    f"(looked in {', '.join(INCLUDE_DIRS)})")
                    continue
                to = layer_of(target)
                if to not in MAY_USE[layer]:
                    problems.append(f"{where}: {layer} includes {to} (\"{name}\" is {target}); "
                                    f"{layer} may include only {', '.join(sorted(MAY_USE[layer]))}")
                elif layer == "kernels" and to == "kernels":
                    mine, theirs = kernel_family(rel), kernel_family(target)
                    if theirs is not None and theirs != mine:
                        problems.append(f"{where}: the {mine or 'shared'} kernels include the "
                                        f"{theirs} kernels (\"{name}\"); what solvers share "
                                        f"lives in kernels/include/stratus/kernels/ itself")
                continue
            for what, pattern, allowed in THIRD_PARTY:
                if pattern.search(name) and layer not in allowed:
                    problems.append(f"{where}: {layer} includes {what} (<{name}>); only "
                                    f"{', '.join(sorted(allowed))} may")
            if layer == "kernels" and name in KERNEL_FORBIDDEN_STD:
                problems.append(f"{where}: kernels include <{name}>: device code has no use for "
                                "it (host builders belong in solvers/)")
            continue
        code, in_block = strip_comments(line, in_block)
        if layer == "kernels":
            for pattern, what in KERNEL_FORBIDDEN_CODE:
                if pattern.search(code):
                    problems.append(f"{where}: kernel code {what}: {line.strip()}")
    return problems


# The planted violations of --self-test: (file to create or append to, text, expected words).
PLANTS = [
    ("kernels/include/stratus/kernels/planted.hpp", '#include "stratus/io/deck.hpp"\n', "kernels includes io"),
    ("kernels/include/stratus/kernels/planted.hpp", '#include "stratus/core/error.hpp"\n', "kernels includes core"),
    ("kernels/include/stratus/kernels/planted.hpp", '#include "stratus/solvers/solver.hpp"\n', "kernels includes solvers"),
    ("kernels/include/stratus/kernels/planted.hpp", "#include <mpi.h>\n", "kernels includes MPI"),
    ("kernels/include/stratus/kernels/spectral/planted.hpp", '#include "stratus/kernels/md/types.hpp"\n', "the spectral kernels include the md kernels"),
    ("kernels/include/stratus/kernels/planted.hpp", '#include "stratus/kernels/euler/gas.hpp"\n', "the shared kernels include the euler kernels"),
    ("kernels/include/stratus/kernels/planted.hpp", "#include <vector>\n", "kernels include <vector>"),
    ("kernels/include/stratus/kernels/planted.hpp", 'inline void f() { throw 1; }\n', "kernel code throws"),
    ("kernels/include/stratus/kernels/planted.hpp", "inline void f(V& v) { Kokkos::realloc(v, 2); }\n", "kernel code allocates"),
    ("core/src/planted.cpp", '#include "stratus/io/deck.hpp"\n', "core includes io"),
    ("core/src/planted.cpp", '#include "stratus/solvers/solver.hpp"\n', "core includes solvers"),
    ("core/src/planted.cpp", "#include <Kokkos_Core.hpp>\n", "core includes Kokkos"),
    ("core/src/planted.cpp", '#include "stratus/core/types.hpp"\n', "core includes base"),
    ("io/src/planted.cpp", '#include "stratus/solvers/solver.hpp"\n', "io includes solvers"),
    ("io/src/planted.cpp", "#include <Kokkos_Core.hpp>\n", "io includes Kokkos"),
    ("core/base/include/stratus/core/planted.hpp", '#include "stratus/core/error.hpp"\n', "base includes core"),
    ("core/base/include/stratus/core/scalar.hpp", "#include <Kokkos_Core.hpp>\n", "scalar includes Kokkos"),
    ("apps/stratus/planted.cpp", "#include <fftw3.h>\n", "apps includes FFTW"),
    ("solvers/src/planted.cpp", "#include <hdf5.h>\n", "solvers includes HDF5"),
    ("solvers/src/planted.cpp", '#include "stratus/nowhere.hpp"\n', "no Stratus header"),
]


def self_test(root):
    clean = check_tree(root)
    if clean:
        print("self-test: the tree itself has violations:\n  " + "\n  ".join(clean))
        return 1
    failed = 0
    with tempfile.TemporaryDirectory(prefix="stratus-layers-") as tmp:
        copy = os.path.join(tmp, "tree")
        for top in sorted({p.split("/")[0] for p, _ in LAYER_DIRS}):
            shutil.copytree(os.path.join(root, top), os.path.join(copy, top),
                            ignore=shutil.ignore_patterns("*.txt", "*.cmake"))
        for target, text, expected in PLANTS:
            path = os.path.join(copy, target)
            existed = os.path.exists(path)
            before = open(path).read() if existed else ""
            with open(path, "w") as f:
                f.write(before + "// planted by check-layers.py --self-test\n" + text)
            line = before.count("\n") + 2
            found = check_tree(copy)
            want = f"{target}:{line}:"
            hit = [p for p in found if p.startswith(want) and expected in p]
            if len(found) == 1 and hit:
                print(f"ok: planted {text.strip()!r} in {target}: {hit[0]}")
            else:
                failed += 1
                print(f"FAILED: planted {text.strip()!r} in {target}: expected one report at {want} "
                      f"saying '{expected}', got {found or 'none'}")
            if existed:
                with open(path, "w") as f:
                    f.write(before)
            else:
                os.remove(path)
    if failed:
        print(f"self-test: {failed} of {len(PLANTS)} planted violations not reported as expected")
        return 1
    print(f"self-test: all {len(PLANTS)} planted violations reported, each at its file:line")
    return 0


def main():
    ap = argparse.ArgumentParser(description="Checks the layer rules of every #include.")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."),
                    help="the repository root (default: this script's repository)")
    ap.add_argument("--self-test", action="store_true",
                    help="plant one violation of each rule in a copy of the tree; each must be reported")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    if not os.path.isdir(os.path.join(root, "kernels")):
        print(f"check-layers: {root}: expected a Stratus tree (no kernels/ folder)", file=sys.stderr)
        return 2
    if args.self_test:
        return self_test(root)
    problems = check_tree(root)
    for p in problems:
        print(p)
    if problems:
        print(f"check-layers: {len(problems)} violation(s) of the layer rules (docs/architecture.md)")
        return 1
    print("check-layers: every #include follows the layer rules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
