"""Every rule page in rules/ is executable documentation.

Each `python` block under `## Example` must yield its page's code (and no
other code); each under `## Use instead` must yield nothing. Pages added
later are picked up without touching this file.
"""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from devlint.cli import main
from devlint.config import Settings
from devlint.engine import check_bytes
from devlint.rules import all_infos

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "rules").glob("DL*.md"))
_BLOCK = re.compile(r"^## ([^\n]+)$|^```([^\n]*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_ALL = Settings(select=("ALL",))


def _blocks(page: Path) -> list[tuple[str, int, str]]:
    """(section, index within the section, code) of every `python` block."""
    section = ""
    counts: dict[str, int] = {}
    found = []
    for match in _BLOCK.finditer(page.read_text(encoding="utf-8")):
        if match.group(1) is not None:
            section = match.group(1).strip()
            continue
        if match.group(2).strip() != "python":
            continue
        counts[section] = counts.get(section, 0) + 1
        found.append((section, counts[section], match.group(3)))
    return found


def _cases(section: str) -> list:
    return [
        pytest.param(page.stem, code, id=f"{page.stem}-{section.split()[0].lower()}-{index}")
        for page in PAGES
        for block_section, index, code in _blocks(page)
        if block_section == section
    ]


def _codes(code: str) -> list[str]:
    return [f.code for f in check_bytes(code.encode(), Path("block.py"), "block.py", _ALL).findings]


def test_pages_exist_and_have_examples() -> None:
    assert len(PAGES) >= 5
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        assert text.startswith(f"# {page.stem}: "), page.name
        for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix"):
            assert heading in text, f"{page.name} lacks {heading}"


@pytest.mark.parametrize(("rule", "code"), _cases("Example"))
def test_bad_block_yields_exactly_its_code(rule: str, code: str) -> None:
    codes = _codes(code)
    assert codes, f"{rule}: a Bad block yields no finding"
    assert set(codes) == {rule}, f"{rule}: a Bad block yields {codes}"


@pytest.mark.parametrize(("rule", "code"), _cases("Use instead"))
def test_good_block_yields_nothing(rule: str, code: str) -> None:
    assert _codes(code) == [], f"{rule}: a Good block yields findings"


def test_rules_with_a_visitor_have_runnable_examples() -> None:
    engine_only = {"DL000", "DL999"}
    for info in all_infos():
        if info.code in engine_only:
            continue
        sections = {section for section, _, _ in _blocks(ROOT / "rules" / f"{info.code}.md")}
        assert {"Example", "Use instead"} <= sections, info.code


def test_every_rule_has_a_page() -> None:
    codes = {info.code for info in all_infos()}
    assert codes, "no rules registered"
    missing = sorted(code for code in codes if not (ROOT / "rules" / f"{code}.md").is_file())
    assert missing == []
    orphans = sorted(page.stem for page in PAGES if page.stem not in codes)
    assert orphans == []


def test_rules_command_lists_every_page() -> None:
    result = CliRunner().invoke(main, ["rules"])
    assert result.exit_code == 0
    listed = {line.split()[0] for line in result.output.splitlines()[1:] if line.strip()}
    assert listed == {page.stem for page in PAGES}


@pytest.mark.parametrize("page", PAGES, ids=[page.stem for page in PAGES])
def test_explain_prints_the_page(page: Path) -> None:
    result = CliRunner().invoke(main, ["explain", page.stem.lower()])
    assert result.exit_code == 0
    assert result.output == page.read_text(encoding="utf-8")


def test_explain_unknown_code_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["explain", "DL777"])
    assert result.exit_code == 2
    assert "unknown rule code 'DL777'" in result.output
    assert "Traceback" not in result.output


def test_pages_ship_in_the_wheel_and_explain_works_from_a_regular_install(tmp_path: Path) -> None:
    """Build the wheel, install it (no editable magic, no source tree) and run `devlint explain`."""
    wheels = tmp_path / "wheels"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(wheels), str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = wheels.glob("devlint-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    for page in PAGES:
        assert f"devlint/_pages/{page.name}" in names
    target = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); import devlint; "
        "assert devlint.__file__.startswith(sys.argv[1]), devlint.__file__; "
        "from devlint.cli import main; sys.argv = ['devlint', 'explain', 'DL101']; main()"
    )
    run = subprocess.run([sys.executable, "-c", script, str(target)], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout == (ROOT / "rules" / "DL101.md").read_text(encoding="utf-8")
