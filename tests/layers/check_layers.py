#!/usr/bin/env python3
"""Fails when a file under src/ includes a header of a layer it may not see.

The layers and what each may include (itself and the layers below it) are the architecture that
README.md's layer table describes; a new folder under src/ must be added here to be allowed at all.

    check_layers.py [SRC_DIR]     checks SRC_DIR (default: the repository's src/)
    check_layers.py --self-test   checks that an include pointing up is caught
"""
import os
import re
import sys
import tempfile

BELOW = {
    "core": set(),
    "wire": {"core"},
    "policy": {"core"},
    "engine": {"core", "policy"},
    "scheduler": {"core", "policy", "engine"},
    "sim": {"core", "wire", "policy", "engine", "scheduler"},
    "kube": {"core", "wire"},
    # The scheduler's dashboard (/ui): built from the cycle's state, its access checked through the API client.
    "dashboard": {"core", "wire", "policy", "engine", "scheduler", "kube"},
    "adapter": {"core", "wire", "policy", "engine", "scheduler", "kube", "dashboard"},
    "apiserver": {"core", "wire"},
    # The GPU-memory admission webhook: the patch needs the annotation names only.
    "admission": {"core", "wire", "adapter"},
    "cli": {"core", "wire", "policy", "engine", "scheduler", "sim", "kube", "dashboard", "adapter", "apiserver",
            "admission"},
    # The node side of GPU memory: the ledger, resolvers and interposer need libc only; the node
    # agent reads pods through the API client and the annotations the adapter defines.
    "gpumem": {"core", "wire", "kube", "adapter"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.MULTILINE)
SOURCE_SUFFIXES = (".h", ".cc", ".in")


def violations(src_dir):
    """(problems, includes checked): each problem names the file, the line and the include."""
    problems, checked = [], 0
    for layer in sorted(os.listdir(src_dir)):
        path = os.path.join(src_dir, layer)
        if not os.path.isdir(path):
            continue
        if layer not in BELOW:
            problems.append(f"src/{layer}/: a folder that is no known layer (add it to {__file__})")
            continue
        allowed = BELOW[layer] | {layer}
        for directory, _, files in os.walk(path):
            for name in sorted(files):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                file_path = os.path.join(directory, name)
                with open(file_path, encoding="utf-8") as source:
                    text = source.read()
                for match in INCLUDE.finditer(text):
                    checked += 1
                    if match.group(1) not in allowed:
                        line = text.count("\n", 0, match.start()) + 1
                        relative = os.path.relpath(file_path, os.path.dirname(src_dir))
                        problems.append(f"{relative}:{line}: {layer} includes {match.group(0).strip()!r}, but may "
                                        f"include only {', '.join(sorted(allowed))}")
    return problems, checked


def self_test():
    with tempfile.TemporaryDirectory() as root:
        src = os.path.join(root, "src")
        for layer, text in {"core": '#include "core/a.h"\n', "engine": '#include "policy/p.h"\n',
                            "policy": '// why\n#include "scheduler/cycle.h"\n'}.items():
            os.makedirs(os.path.join(src, layer))
            with open(os.path.join(src, layer, "x.cc"), "w", encoding="utf-8") as out:
                out.write(text)
        problems, checked = violations(src)
        assert checked == 3, checked
        assert len(problems) == 1 and problems[0].startswith("src/policy/x.cc:2: policy includes"), problems
    print("ok: an include pointing up is caught")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    src_dir = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "src")
    problems, checked = violations(os.path.abspath(src_dir))
    for problem in problems:
        print(problem, file=sys.stderr)
    if checked == 0:
        print(f"no includes found under {src_dir}", file=sys.stderr)
        return 1
    print(f"{checked} includes checked, {len(problems)} pointing where their layer may not look")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
