#!/usr/bin/env python3
"""Regenerate fixtures/NAME.expected from the current devlint (review the diff before committing).

    python tests/update_fixtures.py            # every fixture
    python tests/update_fixtures.py mnist_train_buggy

Each .expected file holds the exact output of
`devlint check --no-cache fixtures/NAME.py` (or `NAME.ipynb`), run from the repository root.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def command(fixture: Path) -> list[str]:
    return [sys.executable, "-m", "devlint", "check", "--no-cache", fixture.relative_to(ROOT).as_posix()]


def current_output(fixture: Path) -> tuple[int, str]:
    env = {**os.environ, "NO_COLOR": "1"}
    done = subprocess.run(command(fixture), cwd=ROOT, capture_output=True, text=True, env=env)
    if done.returncode not in (0, 1):
        raise SystemExit(f"devlint exited {done.returncode} on {fixture.name}:\n{done.stderr}")
    return done.returncode, done.stdout


def main(names: list[str]) -> int:
    every = sorted([*FIXTURES.glob("*.py"), *FIXTURES.glob("*.ipynb")])
    fixtures = [path for path in every if path.stem in {Path(name).stem for name in names}] if names else every
    changed = 0
    for fixture in fixtures:
        _, output = current_output(fixture)
        expected = fixture.with_suffix(".expected")
        if not expected.exists() or expected.read_text(encoding="utf-8") != output:
            expected.write_text(output, encoding="utf-8")
            changed += 1
            print(f"updated {expected.relative_to(ROOT)}")
    print(f"{len(fixtures)} fixtures, {changed} updated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
