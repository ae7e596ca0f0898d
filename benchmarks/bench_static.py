"""Speed of `devlint check` against plain libcst parsing and the linters users know, side by side.

    .venv/bin/python benchmarks/bench_static.py [TREE] [--install-tools] [--skip torchfix,fixit] [--pairs N] [--project-pairs N]

TREE defaults to the Python sources of the installed torch package. The
files devlint's own discovery finds in TREE are copied into a scratch folder
outside any git checkout or virtual environment, so that every tool walks
exactly the same files (Fixit, for one, skips what a .gitignore above the
tree names). Each tool is timed as a whole command, start-up included, in
this one run:

- devlint cold (no cache) with the default job count, cold with `--jobs 1`,
  and warm (nothing changed; best of three);
- plain libcst parsing of every file in one process, once before and once
  after devlint (the machine's speed drifts; ratios use the mean of the
  two): the floor for any tool that parses every file with libcst;
- with `--pairs N`, N more back-to-back pairs of plain parsing and devlint's
  cold run; the cold goal is then judged on the median of the pairs' ratios,
  which drift cannot move the way it moves runs minutes apart;
- with `--project-pairs N`, N back-to-back pairs of devlint's cold run as
  shipped and the same run with the project pass off (each file checked
  alone, as before issue 15): the cost of reading the project, measured on
  today's analysis rather than against an older version whose analysis did
  less;
- TorchFix 0.7 (all rules) and Fixit 2.2 (default rules), each from a
  virtual environment of its own (TorchFix pins an older libcst). With
  `--install-tools` the script creates them under $DEVLINT_BENCH_VENVS
  (default /tmp/bench-venvs); without, a tool that is not there is skipped.

It prints wall time, the CPU time the command used (all its processes:
on a busy machine wall time says little), kLOC/s and each wall time as a
ratio of plain parsing, how many files
devlint had to parse at all (a file naming none of the rules' needles is
never parsed), whether the outputs of the three devlint runs are
byte-identical, the goals of issue 7 met or not, and how the cost grows on
one big generated file and one very long function (linear: time per MB and
per kLOC stay flat as the size doubles).

There are no timing assertions anywhere in the test suite: this script is
where speed is measured, and it is meant to be re-run after any change to
the analysis.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PYTHON = Path(sys.executable)
DEVLINT = [str(PYTHON), "-m", "devlint"]
VENVS = Path(os.environ.get("DEVLINT_BENCH_VENVS", "/tmp/bench-venvs"))
TOOLS = {
    # name: (venv folder, pip requirement, executable, arguments before the paths)
    "torchfix": ("torchfix", "torchfix==0.7.0", "torchfix", ["--select", "ALL"]),
    "fixit": ("fixit", "fixit==2.2.1", "fixit", ["lint"]),
}

_PARSE_ONLY = """
import sys, libcst
paths = sys.stdin.read().splitlines()
failed = 0
for path in paths:
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        libcst.parse_module(data)
    except Exception:
        failed += 1
print(len(paths), failed)
"""

# devlint's own command with the engine's project pass off: every file checked alone.
_FILES_ALONE = """
import sys
import devlint.engine as engine
from devlint.cli import main
check_files = engine.check_files
engine.check_files = lambda *args, **kwargs: check_files(*args, **{**kwargs, "project": False})
sys.argv[0] = "devlint"
main()
"""


@dataclass
class Timing:
    label: str
    seconds: float | None  # None: skipped
    note: str = ""
    output: bytes = b""
    timed_out: bool = False
    cpu: float | None = None  # user + system seconds of the command and its workers


def default_tree() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("torch")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        sys.exit("torch is not installed here: give the tree to measure as an argument")
    return Path(list(spec.submodule_search_locations)[0])


def discover(tree: Path) -> list[Path]:
    from devlint.discovery import FileFinder

    return [path for path, _ in FileFinder(root=tree).files([tree])]


def count_lines(files: list[Path]) -> tuple[int, int]:
    lines = size = 0
    for path in files:
        data = path.read_bytes()
        lines += data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
        size += len(data)
    return lines, size


def files_needing_a_parse(files: list[Path]) -> int:
    """Files that mention a needle of some default rule: the only ones devlint parses."""
    from devlint.config import Settings
    from devlint.engine import selected_rules
    from devlint.source import UnreadableSource, decode

    _, rules = selected_rules(Settings())
    needles = {needle for rule in rules for needle in rule.needles}
    count = 0
    for path in files:
        try:
            text = decode(path.read_bytes()).text
        except (OSError, UnreadableSource):
            continue
        if any(needle in text for needle in needles):
            count += 1
    return count


def run(label: str, command: list[str], cwd: Path, timeout: float, stdin: bytes | None = None, env: dict | None = None) -> Timing:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        done = subprocess.run(
            command, cwd=cwd, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, env=env
        )
    except subprocess.TimeoutExpired:
        return Timing(label, time.perf_counter() - start, f"stopped after {timeout:.0f} s", timed_out=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    note = ""
    if done.returncode not in (0, 1):
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["(no message)"]
        note = f"exit {done.returncode}: {tail[0][:100]}"
    return Timing(label, seconds, note, done.stdout, cpu=cpu)


def tool_executable(name: str, install: bool) -> tuple[Path | None, str]:
    folder, requirement, executable, _ = TOOLS[name]
    venv = VENVS / folder
    binary = venv / "bin" / executable
    if binary.exists():
        return binary, ""
    if not install:
        return None, f"not installed in {venv} (run with --install-tools to create it)"
    print(f"  creating {venv} with {requirement} ...", flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "--quiet", requirement], check=True, capture_output=True, timeout=900
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as error:
        shutil.rmtree(venv, ignore_errors=True)
        detail = getattr(error, "stderr", b"") or b""
        return None, f"could not install {requirement}: {detail.decode(errors='replace').strip()[-200:] or error}"
    return (binary if binary.exists() else None), ""


def devlint_runs(tree: Path, work: Path, timeout: float) -> list[Timing]:
    config = work / "devlint.toml"  # the defaults, and a cache that lives in the scratch folder
    config.write_text("# defaults\n")
    cache = work / ".devlint_cache"
    base = [*DEVLINT, "check", str(tree), "--config", str(config), "--no-color", "--exit-zero"]
    shutil.rmtree(cache, ignore_errors=True)
    cold = run("devlint cold, default jobs", base, work, timeout)
    shutil.rmtree(cache, ignore_errors=True)
    cold_one = run("devlint cold, --jobs 1", [*base, "--jobs", "1"], work, timeout)
    warm = [run("devlint warm (best of 3)", base, work, timeout) for _ in range(3)]
    empty = work / "empty"
    empty.mkdir(exist_ok=True)
    startup = min(
        (run("devlint start-up (empty folder)", [*base[:4], str(empty), *base[5:]], work, timeout) for _ in range(3)),
        key=lambda t: t.seconds or 0.0,
    )
    best = min(warm, key=lambda t: t.seconds or 0.0)
    best.note = (best.note + " " if best.note else "") + "runs: " + ", ".join(f"{t.seconds:.2f}" for t in warm)
    identical = len({t.output for t in (cold, cold_one, *warm)}) == 1
    for timing in (cold, cold_one, best):
        if not identical:
            timing.note = (timing.note + " " if timing.note else "") + "OUTPUT DIFFERS"
    return [cold, cold_one, best, startup]


def parse_run(files: list[Path], work: Path, timeout: float, label: str) -> Timing:
    listing = "\n".join(str(path) for path in files).encode()
    return run(label, [str(PYTHON), "-c", _PARSE_ONLY], work, timeout, stdin=listing)


def paired_ratios(tree: Path, files: list[Path], work: Path, timeout: float, pairs: int) -> Iterator[float]:
    """Cold devlint over plain parsing, each pair timed back to back (alternating which goes first).

    Within a pair the machine's speed has had little time to drift, so the
    ratio of a pair is steadier than a ratio of runs minutes apart.
    """
    config = work / "devlint.toml"
    command = [*DEVLINT, "check", str(tree), "--config", str(config), "--no-color", "--exit-zero", "--no-cache"]
    for index in range(pairs):
        if index % 2 == 0:
            parse = parse_run(files, work, timeout, "libcst parse only")
            cold = run("devlint cold", command, work, timeout)
        else:
            cold = run("devlint cold", command, work, timeout)
            parse = parse_run(files, work, timeout, "libcst parse only")
        if parse.seconds and cold.seconds and not parse.timed_out and not cold.timed_out:
            yield cold.seconds / parse.seconds


def project_cost(tree: Path, work: Path, timeout: float, pairs: int) -> Iterator[tuple[Timing, Timing]]:
    """Cold devlint as shipped and with each file checked alone, back to back (alternating order)."""
    config = work / "devlint.toml"
    args = ["check", str(tree), "--config", str(config), "--no-color", "--exit-zero", "--no-cache"]
    for index in range(pairs):
        runs = [("project", [*DEVLINT, *args]), ("alone", [str(PYTHON), "-c", _FILES_ALONE, *args])]
        timed = {label: run(label, command, work, timeout) for label, command in (runs if index % 2 == 0 else runs[::-1])}
        yield timed["project"], timed["alone"]


def external_runs(files: list[Path], tree: Path, work: Path, args: argparse.Namespace) -> list[Timing]:
    out = [parse_run(files, work, args.timeout, "libcst parse only, after devlint")]
    for name in ("torchfix", "fixit"):
        label = {"torchfix": "TorchFix 0.7, all rules", "fixit": "Fixit 2.2, default rules"}[name]
        if name in args.skip:
            out.append(Timing(label, None, "skipped (--skip)"))
            continue
        binary, why = tool_executable(name, args.install_tools)
        if binary is None:
            out.append(Timing(label, None, f"skipped: {why}"))
            continue
        env = {**os.environ, "PYTHONPATH": ""}
        out.append(run(label, [str(binary), *TOOLS[name][3], str(tree)], work, args.timeout, env=env))
    return out


def _row(timing: Timing, kloc: float, floor: float | None) -> str:
    if timing.seconds is None:
        return f"  {timing.label:<36} {'-':>9} {'-':>9} {'-':>9} {'-':>9}  {timing.note}"
    bound = ">" if timing.timed_out else " "
    cpu = f"{timing.cpu:8.2f}s" if timing.cpu is not None else "        -"
    rate = f"{kloc / timing.seconds:9.1f}" if timing.seconds else "        -"
    ratio = f"{bound}{timing.seconds / floor:7.2f}x" if floor else "        -"
    return f"  {timing.label:<36} {bound}{timing.seconds:7.2f}s {cpu} {rate} {ratio}  {timing.note}"


# -- cost against size ---------------------------------------------------------

def generated_module(kib: int) -> str:
    """A generated module of about `kib` KiB: many small functions that move tensors around."""
    block = (
        "def step_{i}(model, batch, device):\n"
        "    x = batch['x{i}'].to(device)\n"
        "    y = torch.zeros(4, {i} % 7 + 1, device=device)\n"
        "    out = model(x) + y.sum()\n"
        "    table_{i} = [{i}, {i} + 1, {i} * 2, 'entry-{i}', ({i}, {i})]\n"
        "    return out.cpu(), table_{i}\n\n\n"
    )
    parts = ["import torch\n\n\n"]
    size = 0
    i = 0
    while size < kib * 1024:
        part = block.format(i=i)
        parts.append(part)
        size += len(part)
        i += 1
    return "".join(parts)


def long_function(lines: int) -> str:
    """One function of `lines` statements, each depending on the one before (a dataflow worst case)."""
    body = ["import torch\n\n\ndef forward(model, batch, device):\n", "    x0 = batch['x'].to(device)\n"]
    for i in range(1, lines):
        if i % 4 == 0:
            body.append(f"    x{i} = torch.ones(3, device=device) + x{i - 1}\n")
        elif i % 4 == 1:
            body.append(f"    x{i} = model(x{i - 1})\n")
        elif i % 4 == 2:
            body.append(f"    if x{i - 1}.sum() > {i}:\n        x{i} = x{i - 1} * 2\n    else:\n        x{i} = x{i - 1}\n")
        else:
            body.append(f"    x{i} = x{i - 1}.detach()\n")
    body.append(f"    return x{lines - 1}\n")
    return "".join(body)


def scaling(work: Path, timeout: float, big_mib: float, long_lines: int) -> Iterator[str]:
    cases = []
    # Files past devlint's size caps (source.MAX_PARSED_TOKENS, MAX_ANALYSED_CHARS) are refused
    # with DL000, so the doubling series stays under them and the 5 MB file shows what refusing costs.
    for mib in (big_mib / 4, big_mib / 2, big_mib, 5.0):
        kib = int(mib * 1024)
        cases.append((f"generated module {kib / 1024:.2f} MB", f"generated_{kib}.py", generated_module(kib)))
    for fraction in (0.25, 0.5, 1.0):
        n = int(long_lines * fraction)
        cases.append((f"one function of {n} statements", f"long_{n}.py", long_function(n)))
    config = work / "devlint.toml"
    yield f"  {'file':<40} {'size':>8} {'lines':>8} {'devlint':>9} {'parse':>9} {'ms/kLOC':>8} {'x parse':>8}"
    for label, name, text in cases:
        path = work / name
        path.write_text(text)
        lines = text.count("\n")
        tool = run(label, [*DEVLINT, "check", str(path), "--config", str(config), "--no-cache", "--jobs", "1", "--exit-zero"], work, timeout)
        if b"file too large to analyse" in tool.output:
            # Refused unparsed (DL000): what matters is that refusing costs next to nothing.
            yield f"  {label:<40} {len(text) / 1e6:7.2f}M {lines:8d} {tool.seconds:8.2f}s   (over the size cap, not parsed)"
            continue
        parse = run("parse", [str(PYTHON), "-c", _PARSE_ONLY], work, timeout, stdin=str(path).encode())
        if tool.timed_out or tool.seconds is None or parse.seconds is None:
            yield f"  {label:<40} {len(text) / 1e6:7.2f}M {lines:8d}   stopped after {timeout:.0f} s"
            continue
        note = f"  {tool.note}" if tool.note else ""
        yield (
            f"  {label:<40} {len(text) / 1e6:7.2f}M {lines:8d} {tool.seconds:8.2f}s {parse.seconds:8.2f}s"
            f" {1000 * tool.seconds / (lines / 1000):8.1f} {tool.seconds / parse.seconds:7.2f}x{note}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", nargs="?", type=Path, help="folder to measure (default: the installed torch package)")
    parser.add_argument("--install-tools", action="store_true", help="create the TorchFix/Fixit virtual environments if missing")
    parser.add_argument("--skip", default="", help="comma-separated: torchfix, fixit, scaling")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds any one command may take (default 1800)")
    parser.add_argument("--big-mib", type=float, default=0.6, help="largest generated module analysed (default 0.6)")
    parser.add_argument("--sample", type=int, help="measure only about this many files, spread evenly over the tree")
    parser.add_argument("--long-lines", type=int, default=16_000, help="statements in the longest function (default 16000)")
    parser.add_argument(
        "--project-pairs", type=int, default=0,
        help="also time devlint's cold run with and without the project pass back to back this many times (issue 15's cost goal)",
    )
    parser.add_argument(
        "--pairs", type=int, default=0,
        help="also time plain parsing and devlint's cold run back to back this many times; the cold goal is then judged on the median pair",
    )
    args = parser.parse_args()
    args.skip = {part.strip() for part in args.skip.split(",") if part.strip()}

    tree = (args.tree or default_tree()).resolve()
    files = discover(tree)
    if not files:
        sys.exit(f"no Python files under {tree}")
    if args.sample and args.sample < len(files):
        step = len(files) / args.sample
        files = [files[int(i * step)] for i in range(args.sample)]
    lines, size = count_lines(files)
    kloc = lines / 1000
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"devlint speed benchmark: {tree}" + (f" (a sample of {len(files)} files)" if args.sample else ""))
    print(f"  {len(files)} files, {kloc:.0f} kLOC, {size / 1e6:.1f} MB; {cores} cores; Python {sys.version.split()[0]}")
    print(f"  load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    parsed = files_needing_a_parse(files)
    print(f"  files devlint parses (they mention a rule's needle): {parsed} of {len(files)}", flush=True)

    with tempfile.TemporaryDirectory(prefix="devlint-bench-") as scratch:
        work = Path(scratch)
        copy = work / "tree"
        copied = []
        for path in files:
            target = copy / path.relative_to(tree)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
            copied.append(target)
        # Plain parsing is timed before and after devlint: on a shared machine the
        # speed drifts within a run, and the ratios use the mean of the two.
        print("  measuring libcst (before devlint) ...", flush=True)
        before = parse_run(copied, work, args.timeout, "libcst parse only, before devlint")
        print("  measuring devlint ...", flush=True)
        ours = devlint_runs(copy, work, args.timeout)
        print("  measuring libcst (after devlint) and the other linters ...", flush=True)
        theirs = external_runs(copied, copy, work, args)
        floors = [t.seconds for t in (before, theirs[0]) if t.seconds and not t.timed_out]
        floor = sum(floors) / len(floors) if floors else None

        print()
        print(f"  {'run':<36} {'wall':>9} {'cpu':>9} {'kLOC/s':>9} {'x parse':>9}")
        for timing in (*ours, before, *theirs):
            print(_row(timing, kloc, floor))
        print("  (x parse: against the mean of the two plain parses)")
        findings = ours[0].output.count(b"\n") - 1
        print(f"\n  devlint findings: {max(findings, 0)}; outputs of the cold, --jobs 1 and warm runs "
              f"{'byte-identical' if 'OUTPUT DIFFERS' not in ours[0].note else 'DIFFER'}")

        cold, _, warm, startup = ours
        ratio = cold.seconds / floor if floor and cold.seconds else None
        if args.pairs > 0:
            ratios = list(paired_ratios(copy, copied, work, args.timeout, args.pairs))
            if ratios:
                ratio = statistics.median(ratios)
                print(f"\n  cold, default jobs / plain parse, in {len(ratios)} back-to-back pairs: "
                      f"{', '.join(f'{r:.2f}' for r in ratios)}; median {ratio:.2f}x", flush=True)
        print("\n  goals (issue 7):")
        if ratio is not None:
            basis = "median pair" if args.pairs > 0 else "mean of the two parses"
            print(f"    cold, default jobs <= 0.7x plain parsing: {ratio:.2f}x ({basis})  {'met' if ratio <= 0.7 else 'NOT met'}")
        if warm.seconds and startup.seconds:
            # Start-up is paid once whatever the tree; the rest grows with the file count.
            per = startup.seconds + max(warm.seconds - startup.seconds, 0.0) * 1600 / len(files)
            print(f"    warm <= 1.0 s for ~1,600 files: {warm.seconds:.2f} s for {len(files)} files, "
                  f"start-up {startup.seconds:.2f} s, so {per:.2f} s for 1,600  {'met' if per <= 1.0 else 'NOT met'}")
        if args.project_pairs > 0:
            print("\n  the project pass (issue 15): cold runs as shipped / with every file checked alone, back to back:", flush=True)
            wall, cpu = [], []
            for shipped, alone in project_cost(copy, work, args.timeout, args.project_pairs):
                if shipped.seconds and alone.seconds and shipped.cpu and alone.cpu and not (shipped.timed_out or alone.timed_out):
                    wall.append(shipped.seconds / alone.seconds)
                    cpu.append(shipped.cpu / alone.cpu)
                    print(f"    pair {len(wall)}: wall {shipped.seconds:.2f}s / {alone.seconds:.2f}s = {wall[-1]:.3f}x, "
                          f"cpu {shipped.cpu:.2f}s / {alone.cpu:.2f}s = {cpu[-1]:.3f}x", flush=True)
            if cpu:
                worth = statistics.median(cpu)
                print(f"    median: wall {statistics.median(wall):.3f}x, cpu {worth:.3f}x;"
                      f" project pass costs <= 1.10x: {'met' if worth <= 1.10 else 'NOT met'} (on cpu time: the machine is shared)")
        print(f"  load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)

        if "scaling" not in args.skip:
            print("\n  cost against size (devlint --jobs 1 --no-cache on one file; linear = flat ms/kLOC):", flush=True)
            for line in scaling(work, args.timeout, args.big_mib, args.long_lines):
                print(line, flush=True)


if __name__ == "__main__":
    main()
