"""Mutation testing report: how many deliberate bugs in the core modules the test suite notices.

    pip install -e '.[test,mutation]'
    python bench/mutation.py                 # run mutmut over the modules of [tool.mutmut] only_mutate, then report
    python bench/mutation.py --report-only   # report on the last run (mutants/ and its .meta files)
    python bench/mutation.py prefixsim.core.store # run only the mutants of one module (a mutmut name glob prefix)

A mutant is killed when a test fails (or it hangs past mutmut's timeout: the suite noticed). A
surviving mutant (or one no test runs) that cannot change behaviour is *equivalent*: it is listed in
bench/mutation_equivalents.toml with the reason, matched by module, function and the mutated line,
and not counted against the module. Kill rate = killed / (mutants - equivalent).
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENTS = Path(__file__).with_name("mutation_equivalents.toml")
NAME = re.compile(r"^(?P<module>[\w.]+?)\.x[_ǁ](?P<func>.+?)__mutmut_\d+$")
TARGET = 0.90


def mutmut(*args: str) -> str:
    exe = Path(sys.executable).with_name("mutmut")
    return subprocess.run([str(exe), *args], cwd=ROOT, capture_output=True, text=True, check=False).stdout


def statuses() -> dict[str, str]:
    out = {}
    for line in mutmut("results", "--all", "true").splitlines():
        name, _, status = line.strip().rpartition(": ")
        if name:
            out[name] = status
    return out


def mutated_line(name: str) -> str:
    """The line as the mutant has it (the `+` side of `mutmut show`), whitespace folded."""
    plus = [s[1:] for s in mutmut("show", name).splitlines() if s.startswith("+") and not s.startswith("+++")]
    return " ".join(" ".join(plus).split())


def load_equivalents() -> list[dict]:
    return tomllib.loads(EQUIVALENTS.read_text()).get("equivalent", []) if EQUIVALENTS.exists() else []


def is_equivalent(name: str, line: str, known: list[dict]) -> dict | None:
    m = NAME.match(name)
    func = m.group("func").replace("ǁ", ".").strip(".") if m else ""
    for row in known:
        if name.startswith(row["module"] + ".") and row["function"] == func and " ".join(row["line"].split()) == line:
            return row
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="*", help="only these modules' mutants (e.g. prefixsim.core.store)")
    ap.add_argument("--report-only", action="store_true", help="do not run mutmut; report the last run")
    ap.add_argument("--max-children", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)
    if not args.report_only:
        globs = [f"{m}.*" for m in args.modules]
        subprocess.run([str(Path(sys.executable).with_name("mutmut")), "run", "--max-children",
                        str(args.max_children), *globs], cwd=ROOT, stdout=subprocess.DEVNULL, check=False)
    known = load_equivalents()
    rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    alive: list[tuple[str, str]] = []
    for name, status in sorted(statuses().items()):
        m = NAME.match(name)
        module = m.group("module") if m else name
        if args.modules and module not in args.modules:
            continue
        r = rows[module]
        r["mutants"] += 1
        if status in ("killed", "timeout"):
            r["killed"] += 1
        elif status in ("survived", "no tests"):   # no test runs it: nothing would notice, unless equivalent
            line = mutated_line(name)
            if is_equivalent(name, line, known):
                r["equivalent"] += 1
            else:
                r["survived"] += 1
                alive.append((name, line))
        else:   # not checked yet, suspicious, skipped: neither killed nor excused
            r["other"] += 1
    print(f"{'module':36} {'mutants':>7} {'killed':>7} {'equiv.':>7} {'alive':>6} {'other':>6} {'kill rate':>9}")
    failing = 0
    for module, r in sorted(rows.items()):
        counted = r["mutants"] - r["equivalent"]
        rate = r["killed"] / counted if counted else 1.0
        failing += rate < TARGET
        print(f"{module:36} {r['mutants']:7} {r['killed']:7} {r['equivalent']:7} {r['survived']:6} {r['other']:6} "
              f"{rate:8.1%}{'' if rate >= TARGET else '  < 90 %'}")
    if alive:
        print("\nSurviving mutants (not equivalent):")
        for name, line in alive:
            print(f"  {name}: {line}")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
