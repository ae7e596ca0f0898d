"""The `devlint` command line: check, rules, explain."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from devlint import __version__
from devlint.config import ConfigError, Settings, find_pyproject, load_settings, validate_selectors, with_cli
from devlint.finding import Finding

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    return tuple(part.strip().upper() for part in value.split(",") if part.strip())


def _fail(message: str) -> None:
    click.echo(f"devlint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="devlint", message="%(prog)s %(version)s")
def main() -> None:
    """Find PyTorch code that only works on the machine it was written on."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--select", help="Comma-separated rule codes or prefixes to enable (replaces the defaults).")
@click.option("--ignore", help="Comma-separated rule codes or prefixes to disable.")
@click.option("--extend-select", help="Comma-separated rule codes or prefixes to enable on top of the selection.")
@click.option("--exclude", help="Comma-separated glob patterns to skip (replaces the configured ones).")
@click.option("--extend-exclude", help="Comma-separated glob patterns to skip, on top of the configured ones.")
@click.option("--format", "output_format", type=click.Choice(["text", "json", "sarif", "github"]), default="text", show_default=True)
@click.option("--output-file", "-o", type=click.Path(path_type=Path, dir_okay=False), help="Write the report to this file.")
@click.option("--fix", is_flag=True, help="Apply safe fixes in place.")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff, also apply fixes that may change behaviour.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff and write nothing.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--statistics", is_flag=True, help="Print how many findings each rule has.")
@click.option("--no-cache", is_flag=True, help="Do not read or write .devlint_cache/.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Worker processes (default: the number of cores).")
@click.option("--config", "config_path", type=click.Path(path_type=Path, dir_okay=False), help="A pyproject.toml or devlint.toml to use.")
@click.option("--stdin-filename", help="Check source read from standard input, reported as this path.")
@click.option("--strict", is_flag=True, default=None, help="Also report .cuda() under an availability check.")
@click.option("--quiet", "-q", is_flag=True, help="Print findings only, no summary.")
@click.option("--no-color", is_flag=True, help="No colour, even on a terminal (also: NO_COLOR).")
def check(
    paths: tuple[Path, ...],
    select: str | None,
    ignore: str | None,
    extend_select: str | None,
    exclude: str | None,
    extend_exclude: str | None,
    output_format: str,
    output_file: Path | None,
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    exit_zero: bool,
    statistics: bool,
    no_cache: bool,
    jobs: int | None,
    config_path: Path | None,
    stdin_filename: str | None,
    strict: bool | None,
    quiet: bool,
    no_color: bool,
) -> None:
    """Check PATHS (default: the current folder) for device bugs."""
    from devlint.discovery import FileFinder
    from devlint.engine import check_bytes, check_files, selected_rules

    targets = list(paths) or [Path(".")]
    try:
        settings = _settings(config_path, stdin_filename, targets)
        for option, value in (("--select", select), ("--ignore", ignore), ("--extend-select", extend_select)):
            validate_selectors(_codes(value) or (), option)
        # --select/--ignore/--exclude replace the file's lists; the --extend-* options add to them, as in ruff.
        settings = with_cli(
            settings,
            select=_codes(select),
            ignore=_codes(ignore),
            extend_select=_extended(settings.extend_select, _codes(extend_select)),
            exclude=_patterns(exclude),
            extend_exclude=_extended(settings.extend_exclude, _patterns(extend_exclude)),
            strict=strict or None,
        )
    except ConfigError as error:
        _fail(str(error))
        return
    selected_rules(settings)  # fail early on a broken rule set, before any worker starts
    want_fixes = fix or diff
    report_to_stderr = False
    if stdin_filename is not None:
        data = sys.stdin.buffer.read()
        results = [check_bytes(data, Path(stdin_filename), stdin_filename, settings, keep_source=want_fixes)]
    else:
        finder = FileFinder(exclude=(*settings.exclude, *settings.extend_exclude), root=settings.root)
        files = list(finder.files(targets))
        cache = None
        if not no_cache and not want_fixes:
            from devlint.cache import Cache

            cache = Cache.for_root(settings.root, settings)
        results = check_files(files, settings, jobs=jobs, keep_source=want_fixes, cache=cache)

    if want_fixes:
        from devlint.fixer import apply_fixes

        outcome = apply_fixes(results, settings, unsafe=unsafe_fixes, write=fix and not diff, stdin=stdin_filename is not None)
        if diff:
            click.echo(outcome.diff, nl=False)
        elif stdin_filename is not None:
            # The editor takes standard output as the new buffer: only the source goes there,
            # byte for byte when devlint could not read it, and the report goes to stderr.
            source = results[0].source
            sys.stdout.flush()
            sys.stdout.buffer.write(data if source is None else source.encode(outcome.stdin_text))
            sys.stdout.buffer.flush()
            report_to_stderr = True
        findings = outcome.remaining
        if fix and not quiet:
            click.echo(f"Fixed {outcome.fixed} problem{'s' if outcome.fixed != 1 else ''}.", err=True)
        for message in outcome.errors:
            click.echo(f"devlint: {message}", err=True)
        if diff:
            sys.exit(EXIT_CLEAN if exit_zero or not outcome.diff else EXIT_FINDINGS)
    else:
        findings = sorted((f for result in results for f in result.findings), key=lambda f: f.sort_key)

    _emit(findings, output_format, output_file, statistics, quiet, no_color, report_to_stderr)
    if any(f.code == "DL999" for f in findings):
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_CLEAN if exit_zero or not findings else EXIT_FINDINGS)


def _extended(configured: tuple[str, ...], given: tuple[str, ...] | None) -> tuple[str, ...] | None:
    return None if given is None else (*configured, *given)


def _patterns(value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _settings(config_path: Path | None, stdin_filename: str | None, targets: Sequence[Path]) -> Settings:
    if config_path is not None:
        if not config_path.is_file():
            raise ConfigError(f"{config_path}: no such configuration file")
        return load_settings(config_path, explicit=True)
    anchor = Path(stdin_filename) if stdin_filename else targets[0]
    if not anchor.exists():
        anchor = Path.cwd()
    return load_settings(find_pyproject(anchor))


def _emit(
    findings: list[Finding],
    output_format: str,
    output_file: Path | None,
    statistics: bool,
    quiet: bool,
    no_color: bool,
    to_stderr: bool = False,
) -> None:
    from devlint.reporters import REPORTERS
    from devlint.reporters.text import statistics as render_statistics

    stream = sys.stderr if to_stderr else sys.stdout
    stream_is_tty = output_file is None and stream.isatty()
    color = stream_is_tty and not no_color and not os.environ.get("NO_COLOR")
    if statistics and output_format == "text":
        rendered = render_statistics(findings, color)
    else:
        rendered = REPORTERS[output_format](findings, color)
    if quiet and output_format == "text":
        rendered = "".join(line + "\n" for line in rendered.splitlines()[:-1])
    if output_file is not None:
        try:
            output_file.write_text(rendered, encoding="utf-8")
        except OSError as error:
            _fail(f"cannot write {output_file}: {error.strerror}")
    else:
        click.echo(rendered, nl=False, err=to_stderr)


@main.command()
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules(output_format: str) -> None:
    """List every rule: code, name, default on/off, fixable."""
    import json

    from devlint.rules import all_infos

    infos = all_infos()
    if output_format == "json":
        click.echo(
            json.dumps(
                [
                    {"code": i.code, "name": i.name, "summary": i.summary, "default": i.default_enabled, "fix": i.fix or None}
                    for i in infos
                ],
                indent=2,
            )
        )
        return
    width = max(len(i.name) for i in infos)
    click.echo(f"{'code':<6} {'name':<{width}} {'default':<7} {'fix':<6} summary")
    for i in infos:
        click.echo(f"{i.code:<6} {i.name:<{width}} {'on' if i.default_enabled else 'off':<7} {i.fix or '-':<6} {i.summary}")


@main.command()
@click.argument("code")
def explain(code: str) -> None:
    """Print the documentation page of a rule (for example DL201)."""
    from devlint.pages import rule_page
    from devlint.rules import all_infos

    code = code.upper()
    if code not in {i.code for i in all_infos()}:
        _fail(f"unknown rule code {code!r} (see `devlint rules`)")
    page = rule_page(code)
    if page is None:
        _fail(f"no documentation page found for {code}")
    click.echo(page, nl=not page.endswith("\n"))
