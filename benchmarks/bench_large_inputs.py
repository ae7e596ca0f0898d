"""Time and memory of `devlint check` on large generated inputs, at doubling sizes (issue 20).

Linear cost shows as a time ratio near 2.0 between one size and the next;
memory is the peak resident size of the one process checking the file
(`--jobs 1`). Inputs past the token limit are refused unparsed, and the
point is that refusing them costs next to nothing. `--baseline SRC` also
runs another devlint source tree (e.g. `git archive main | tar -x -C SRC`)
on the same files in the same run, each input once with each.

    python benchmarks/bench_large_inputs.py [--scale 1.0] [--baseline SRC] [--timeout 600]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# Runs devlint's command line in a fresh process and prints that process's peak memory.
_MEASURED = """
import resource, sys
from devlint.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("peak_kib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""


def small_functions(chars: int) -> str:
    """Many small functions, each with a `.cuda()` that --fix turns into `.to(device)`."""
    parts = ["import torch\n"]
    size = 0
    index = 0
    while size < chars:
        part = f"def f{index}(x):\n    y = x + {index}\n    return y.cuda()\n"
        parts.append(part)
        size += len(part)
        index += 1
    parts.append('device = "cuda" if torch.cuda.is_available() else "cpu"\n')
    return "".join(parts)


def one_line(chars: int) -> str:
    """One call with many arguments, all on one line."""
    unit = "torch.zeros(1), "
    return "import torch\nf(" + unit * (chars // len(unit)) + ")\n"


def measure(path: Path, args: list[str], source: Path | None, timeout: float) -> tuple[float | None, float | None, str]:
    """(seconds, peak MB, outcome) of one run; `source`: a devlint tree to import instead of this one."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = str(source)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    start = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-c", _MEASURED, "check", "--no-cache", "--jobs", "1", "--exit-zero", *args, str(path)],
            capture_output=True,
            text=True,
            cwd=path.parent,
            env=env,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None, None, f"stopped after {timeout:.0f} s"
    seconds = time.perf_counter() - start
    peaks = [int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("peak_kib")]
    if not peaks:
        return seconds, None, f"died (exit {done.returncode})"
    outcome = "refused (DL000)" if "file too large to analyse" in done.stdout else "analysed"
    return seconds, peaks[0] / 1024, outcome


def _cell(value: float | None, width: int, digits: int) -> str:
    return f"{value:{width}.{digits}f}" if value is not None else " " * (width - 1) + "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every size by this (default 1.0)")
    parser.add_argument("--baseline", type=Path, help="another devlint source tree to run side by side")
    parser.add_argument("--timeout", type=float, default=600, help="seconds one run may take (default 600)")
    args = parser.parse_args()
    cases: list[tuple[str, Callable[[int], str], list[str], tuple[int, ...]]] = [
        ("small functions, --fix", small_functions, ["--fix"], (100_000, 200_000, 400_000)),
        ("one line of calls", one_line, [], (480_000, 960_000, 1_920_000)),  # under the old 2M-character cap
    ]
    runs: list[tuple[str, Path | None]] = [("this", None)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    print(f"Python {sys.version.split()[0]}; devlint --jobs 1 --no-cache, one process; peak: its peak resident memory;")
    print("x prev: time against the previous size (2.00 is linear); x base: this devlint's time against the baseline's")
    print(f"  {'input':<24} {'chars':>10} {'devlint':>8} {'seconds':>8} {'x prev':>7} {'x base':>7} {'peak MB':>8}  outcome")
    with tempfile.TemporaryDirectory() as folder:
        for label, make, extra, sizes in cases:
            previous: dict[str, float | None] = {}
            for size in sizes:
                text = make(int(size * args.scale))
                seconds_of: dict[str, float | None] = {}
                for name, source in runs:
                    path = Path(folder) / "input.py"
                    path.write_text(text)  # afresh for each run: --fix rewrites it
                    seconds, peak, outcome = measure(path, extra, source, args.timeout)
                    seconds_of[name] = seconds
                    before = previous.get(name)
                    growth = seconds / before if seconds is not None and before else None
                    base = seconds_of.get("baseline")
                    against = seconds_of["this"] / base if name == "baseline" and base and seconds_of["this"] else None
                    print(
                        f"  {label:<24} {len(text):>10,} {name:>8} {_cell(seconds, 8, 2)} {_cell(growth, 7, 2)}"
                        f" {_cell(against, 7, 2)} {_cell(peak, 8, 0)}  {outcome}",
                        flush=True,
                    )
                previous = seconds_of


if __name__ == "__main__":
    main()
