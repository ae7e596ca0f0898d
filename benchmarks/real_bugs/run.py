"""Recall of devlint on real device-bug fixes taken from public git histories.

    python benchmarks/real_bugs/run.py [--mirrors DIR] [--devlint CMD] [--trees] [-v] [MANIFEST...]
    python benchmarks/real_bugs/run.py --validate [MANIFEST...]

Each line of a manifest (default: `fixes.jsonl` beside this script) is one
fix, a JSON object:

    {"id": "vision-1234", "repo": "pytorch/vision", "fix": "<40 hex>",
     "parent": "<40 hex>", "path": "torchvision/ops/boxes.py",
     "lines": [88], "category": "mixed-device-op",
     "cross_file": false, "note": "one sentence: what fails, where"}

`lines` are 1-based lines of the file as it was *before* the fix (at
`parent`) where a linter should point; `category` is one of the shared
evaluation's categories. `cross_file` is true when the bug can only be seen
with knowledge of another file of the same project (a base class, a helper,
a device variable defined elsewhere).

Nothing fetched is kept in this repository: the script reads each project
from a local bare mirror, `<mirrors>/<owner>+<name>/repo` (what the tool
library's `fetch` brings; `--mirrors` or $DEVLINT_MIRRORS, default
/work/.mirror), extracts the file before and after each fix into a scratch
folder, runs devlint once over all pre-fix files and once over all post-fix
files, and prints:

- recall per category: a fix counts as found when devlint reports a code of
  its category within one line of one of its `lines` in the pre-fix file;
- whether the post-fix file is silent at the fixed lines: no finding of the
  category within one line of the lines the fix wrote (the new side of the
  diff hunks that touch `lines`, or where `lines` moved to).

With `--trees` the whole tree of Python files at each commit is extracted
and the file is checked inside it, so that devlint can read the project's
other files. This benchmark needs the mirrors and is not part of CI.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
CATEGORY_CODES: dict[str, frozenset[str]] = {
    "hardcoded-cuda": frozenset({"DL101", "DL102", "DL103"}),
    "loop-missing-to": frozenset({"DL201"}),
    "discarded-to": frozenset({"DL202"}),
    "mixed-device-op": frozenset({"DL301", "DL303"}),
    "numpy-on-accelerator": frozenset({"DL302"}),
    "unregistered-tensor-attr": frozenset({"DL401"}),
    "unregistered-submodules": frozenset({"DL402"}),
    "load-without-map-location": frozenset({"DL501"}),
}
_SHA = re.compile(r"^[0-9a-f]{40}$")
_FIELDS = {"id": str, "repo": str, "fix": str, "parent": str, "path": str, "lines": list, "category": str, "note": str}
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


@dataclass
class Fix:
    id: str
    repo: str
    fix: str
    parent: str
    path: str
    lines: list[int]
    category: str
    note: str
    cross_file: bool = False
    source: str = ""  # manifest file and line, for messages
    post_lines: list[int] = field(default_factory=list)


class ManifestError(Exception):
    pass


def load_manifest(paths: list[Path]) -> list[Fix]:
    fixes: list[Fix] = []
    seen: dict[str, str] = {}
    for path in paths:
        for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not raw.strip() or raw.lstrip().startswith("#"):
                continue
            where = f"{path.name}:{number}"
            try:
                entry = json.loads(raw)
            except json.JSONDecodeError as error:
                raise ManifestError(f"{where}: not JSON ({error})") from None
            for name, kind in _FIELDS.items():
                if not isinstance(entry.get(name), kind):
                    raise ManifestError(f"{where}: field {name!r} missing or not a {kind.__name__}")
            if entry["category"] not in CATEGORY_CODES:
                raise ManifestError(f"{where}: unknown category {entry['category']!r}")
            if not (_SHA.match(entry["fix"]) and _SHA.match(entry["parent"])):
                raise ManifestError(f"{where}: fix and parent must be full 40-hex commit ids")
            if not entry["lines"] or not all(isinstance(n, int) and n > 0 for n in entry["lines"]):
                raise ManifestError(f"{where}: lines must be a non-empty list of 1-based line numbers")
            if entry["id"] in seen:
                raise ManifestError(f"{where}: id {entry['id']!r} already used at {seen[entry['id']]}")
            seen[entry["id"]] = where
            unknown = set(entry) - set(_FIELDS) - {"cross_file"}
            if unknown:
                raise ManifestError(f"{where}: unknown fields {sorted(unknown)}")
            fixes.append(
                Fix(
                    entry["id"], entry["repo"], entry["fix"], entry["parent"], entry["path"], list(entry["lines"]),
                    entry["category"], entry["note"], bool(entry.get("cross_file", False)), where,
                )
            )
    return fixes


def mirror_of(mirrors: Path, repo: str) -> Path:
    """The git directory: `fetch` brings a bare one, or now and then a checkout with `.git` inside."""
    root = mirrors / repo.replace("/", "+") / "repo"
    return root / ".git" if (root / ".git").is_dir() else root


def git(mirror: Path, *args: str, binary: bool = False) -> bytes | str:
    out = subprocess.run(["git", "--git-dir", str(mirror), *args], capture_output=True, check=True)
    return out.stdout if binary else out.stdout.decode("utf-8", "replace")


def post_lines(diff: str, pre: list[int]) -> list[int]:
    """The lines of the post-fix file that the fix wrote at `pre` (or where `pre` moved to)."""
    hunks = [(int(a), int(b or 1), int(c), int(d or 1)) for a, b, c, d in _HUNK.findall(diff)]
    out: set[int] = set()
    for line in pre:
        shift = 0
        touched = False
        for old_start, old_len, new_start, new_len in hunks:
            old_end = old_start + max(old_len, 1) - 1
            if old_start - 1 <= line <= old_end + 1:
                touched = True
                if new_len:
                    out.update(range(new_start, new_start + new_len))
                else:
                    out.add(max(new_start, 1))
            elif old_end < line:
                shift += new_len - old_len
        if not touched:
            out.add(line + shift)
    return sorted(out)


def validate(fixes: list[Fix], mirrors: Path) -> list[str]:
    """Problems with entries: missing mirror or commit, fix not a child of parent, lines out of the file."""
    problems: list[str] = []
    for fix in fixes:
        mirror = mirror_of(mirrors, fix.repo)
        if not mirror.is_dir():
            problems.append(f"{fix.source} {fix.id}: no mirror at {mirror} (fetch github:{fix.repo})")
            continue
        try:
            parents = git(mirror, "rev-list", "--parents", "-n", "1", fix.fix).split()[1:]
        except subprocess.CalledProcessError:
            problems.append(f"{fix.source} {fix.id}: commit {fix.fix} not in the mirror")
            continue
        if fix.parent not in parents:
            problems.append(f"{fix.source} {fix.id}: {fix.parent[:12]} is not a parent of {fix.fix[:12]}")
        try:
            text = git(mirror, "show", f"{fix.parent}:{fix.path}")
        except subprocess.CalledProcessError:
            problems.append(f"{fix.source} {fix.id}: {fix.path} does not exist at the parent")
            continue
        count = len(str(text).splitlines())
        if any(line > count for line in fix.lines):
            problems.append(f"{fix.source} {fix.id}: a line is past the end of the file ({count} lines)")
        diff = str(git(mirror, "diff", "-U0", fix.parent, fix.fix, "--", fix.path))
        if not diff.strip():
            problems.append(f"{fix.source} {fix.id}: the fix does not change {fix.path}")
    return problems


def _extract_tree(mirror: Path, commit: str, into: Path) -> None:
    """Every Python file of the commit (the project around the checked file), and its
    `pyproject.toml` files; objects the mirror lacks (large files) are skipped."""
    listing = str(git(mirror, "ls-tree", "-r", "-z", commit)).split("\0")
    wanted = []
    for row in listing:
        if not row:
            continue
        meta, _, name = row.partition("\t")
        _, kind, sha = meta.split()
        if kind == "blob" and (name.endswith(".py") or name.rsplit("/", 1)[-1] == "pyproject.toml"):
            wanted.append((sha, name))
    # The project's root, as a checkout would mark it (devlint resolves imports from there).
    (into / ".git").mkdir(parents=True, exist_ok=True)
    if not wanted:
        return
    batch = subprocess.run(
        ["git", "--git-dir", str(mirror), "cat-file", "--batch"],
        input="".join(f"{sha}\n" for sha, _ in wanted).encode(), capture_output=True, check=True,
    ).stdout
    position = 0
    for sha, name in wanted:
        header_end = batch.index(b"\n", position)
        header = batch[position:header_end].split()
        position = header_end + 1
        if len(header) < 3 or header[1] == b"missing":
            continue
        size = int(header[2])
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(batch[position : position + size])
        position += size + 1


def extract(fixes: list[Fix], mirrors: Path, work: Path, trees: bool) -> tuple[dict[str, Path], dict[str, Path]]:
    """Each fix's pre- and post-fix file on disk, by fix id."""
    pre: dict[str, Path] = {}
    post: dict[str, Path] = {}
    for fix in fixes:
        mirror = mirror_of(mirrors, fix.repo)
        diff = str(git(mirror, "diff", "-U0", fix.parent, fix.fix, "--", fix.path))
        fix.post_lines = post_lines(diff, fix.lines)
        for side, commit, table in (("pre", fix.parent, pre), ("post", fix.fix, post)):
            root = work / ("trees" if trees else "files") / fix.repo.replace("/", "+") / commit[:12]
            target = root / fix.path
            if not target.exists():
                if trees:
                    _extract_tree(mirror, commit, root)
                else:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(git(mirror, "show", f"{commit}:{fix.path}", binary=True))  # type: ignore[arg-type]
            if target.exists():
                table[fix.id] = target
    return pre, post


def run_devlint(command: str, files: list[Path]) -> dict[Path, list[dict]]:
    argv = [*shlex.split(command), "check", "--format", "json", "--no-cache", "--exit-zero", *map(str, sorted(set(files)))]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stderr[-3000:])
        raise SystemExit(f"devlint exited {proc.returncode}")
    by_file: dict[Path, list[dict]] = defaultdict(list)
    for finding in json.loads(proc.stdout or "[]"):
        by_file[Path(finding["path"]).resolve()].append(finding)
    return by_file


def _hits(findings: list[dict], category: str, lines: list[int]) -> list[dict]:
    codes = CATEGORY_CODES[category]
    return [f for f in findings if f["code"] in codes and any(abs(f["line"] - n) <= 1 for n in lines)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("manifests", nargs="*", type=Path, default=[HERE / "fixes.jsonl"])
    parser.add_argument("--mirrors", type=Path, default=Path(os.environ.get("DEVLINT_MIRRORS", "/work/.mirror")))
    parser.add_argument("--work", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "devlint-real-bugs")
    parser.add_argument("--devlint", default=f"{shlex.quote(sys.executable)} -m devlint")
    parser.add_argument("--trees", action="store_true", help="check each file inside its whole project tree")
    parser.add_argument("--validate", action="store_true", help="only check the manifest against the mirrors")
    parser.add_argument("--category", help="only fixes of this category")
    parser.add_argument("--json", type=Path, help="also write per-fix results to this file")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every miss and every post-fix finding")
    args = parser.parse_args(argv)

    try:
        fixes = load_manifest(args.manifests)
    except (ManifestError, OSError) as error:
        print(f"manifest: {error}", file=sys.stderr)
        return 2
    if args.category:
        fixes = [f for f in fixes if f.category == args.category]
    problems = validate(fixes, args.mirrors)
    if args.validate:
        for problem in problems:
            print(problem)
        repos = {f.repo for f in fixes}
        print(f"{len(fixes)} fixes from {len(repos)} projects; {len(problems)} problems")
        return 1 if problems else 0
    broken = {p.split()[1].rstrip(":") for p in problems}
    if problems:
        print(f"skipping {len(broken)} fixes with problems (run --validate)", file=sys.stderr)
    fixes = [f for f in fixes if f.id not in broken]
    pre, post = extract(fixes, args.mirrors, args.work, args.trees)
    pre_findings = run_devlint(args.devlint, list(pre.values()))
    post_findings = run_devlint(args.devlint, list(post.values()))

    per_category: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    silent = 0
    results = []
    for fix in fixes:
        found = _hits(pre_findings.get(pre[fix.id].resolve(), []), fix.category, fix.lines)
        noisy = _hits(post_findings.get(post[fix.id].resolve(), []), fix.category, fix.post_lines) if fix.id in post else []
        per_category[fix.category][1] += 1
        per_category[fix.category][0] += bool(found)
        silent += not noisy
        results.append({"id": fix.id, "category": fix.category, "found": bool(found), "post_silent": not noisy,
                        "cross_file": fix.cross_file, "pre": [f"{f['line']}:{f['code']}" for f in found]})
        if args.verbose and not found:
            near = [f"{f['line']}:{f['code']}" for f in pre_findings.get(pre[fix.id].resolve(), [])]
            print(f"MISS {fix.id} {fix.category} {fix.repo} {fix.path}:{fix.lines} ({fix.note}) file findings: {near}")
        if args.verbose and noisy:
            print(f"POST {fix.id} {fix.category} {fix.path}: still {[(f['line'], f['code']) for f in noisy]} at {fix.post_lines}")

    total = len(fixes)
    hit = sum(found for found, _ in per_category.values())
    print(f"{'category':28} {'found':>9}  recall")
    for category in CATEGORY_CODES:
        if category in per_category:
            found, count = per_category[category]
            print(f"{category:28} {found:>4} / {count:<3}  {found / count:.2f}")
    cross = [r for r in results if r["cross_file"]]
    if cross:
        print(f"{'(cross-file fixes)':28} {sum(r['found'] for r in cross):>4} / {len(cross):<3}")
    print(f"{'all':28} {hit:>4} / {total:<3}  {hit / total if total else 0:.2f}")
    print(f"post-fix file silent at the fixed lines: {silent} / {total} ({silent / total if total else 0:.2f})")
    print(f"projects: {len({f.repo for f in fixes})}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
