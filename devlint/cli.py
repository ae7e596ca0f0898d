"""The `devlint` command line: check, rules, explain, server. Options are spelled as ruff spells them."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from devlint import __version__
from devlint.config import CommandLine, ConfigError, Settings, SettingsResolver, parse_override, validate_selectors
from devlint.finding import Finding

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130
NO_FILES_WARNING = "No Python files found under the given path(s)"


def _codes(values: Sequence[str]) -> tuple[str, ...] | None:
    """Repeated options add up (`--select DL1 --select DL5`), each one comma-separated, as in ruff."""
    if not values:
        return None
    return tuple(part.strip().upper() for value in values for part in value.split(",") if part.strip())


def _patterns(values: Sequence[str]) -> tuple[str, ...] | None:
    if not values:
        return None
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def _fail(message: str) -> None:
    click.echo(f"devlint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def _warn(message: str) -> None:
    click.echo(f"devlint: warning: {message}", err=True)


class _Commands(click.Group):
    """Ctrl-C ends any command with exit code 130 (128 + SIGINT), as shells and other CLIs do,
    not with click's "Aborted!" and exit 1, which a caller would take for findings."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("devlint: interrupted", err=True)
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="devlint", message="%(prog)s %(version)s")
def main() -> None:
    """Find PyTorch code that only works on the machine it was written on."""


_SELECTOR_HELP = "Comma-separated rule codes or prefixes{}; repeat the option to add more."


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path, readable=False))  # unreadable: DL000, not a usage error
@click.option("--select", multiple=True, help=_SELECTOR_HELP.format(" to enable (replaces the defaults)"))
@click.option("--ignore", multiple=True, help=_SELECTOR_HELP.format(" to disable"))
@click.option("--extend-select", multiple=True, help=_SELECTOR_HELP.format(" to enable on top of the selection"))
@click.option("--extend-ignore", multiple=True, help=_SELECTOR_HELP.format(" to disable on top of the ignored ones"))
@click.option("--exclude", multiple=True, help="Comma-separated glob patterns to skip (replaces the configured ones).")
@click.option("--extend-exclude", multiple=True, help="Comma-separated glob patterns to skip, on top of the configured ones.")
@click.option(
    "--force-exclude/--no-force-exclude",
    default=None,
    help="Apply the excludes to paths named on the command line too (what a pre-commit hook needs).",
)
@click.option(
    "--output-format",
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "sarif", "github"]),
    default="text",
    show_default=True,
    envvar="DEVLINT_OUTPUT_FORMAT",
    show_envvar=True,
    help="Output format (--format is an alias).",
)
@click.option("--output-file", "-o", type=click.Path(path_type=Path, dir_okay=False), help="Write the report to this file.")
@click.option("--fix", is_flag=True, help="Apply safe fixes in place.")
@click.option("--unsafe-fixes", is_flag=True, help="Count unsafe fixes as fixable; with --fix or --diff, apply them too.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff and write nothing.")
@click.option("--show-fixes", is_flag=True, help="List the fixes applied (with --fix) or each finding's fix.")
@click.option("--add-noqa", is_flag=True, help="Add `# noqa: CODE` to every line with a finding, and write nothing else.")
@click.option("--exit-zero", "-e", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--statistics", is_flag=True, help="Print how many findings each rule has (text or JSON).")
@click.option("--show-files", is_flag=True, help="List the files that would be checked, and check nothing.")
@click.option("--show-settings", is_flag=True, help="Print the settings the first file given would be checked with.")
@click.option("--no-cache", is_flag=True, help="Do not read or write .devlint_cache/.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Worker processes (default: the number of cores).")
@click.option(
    "--config",
    "config_values",
    multiple=True,
    metavar="PATH|KEY=VALUE",
    help="A pyproject.toml or devlint.toml to use for every file, or a TOML `key = value` that overrides "
    "one setting of every configuration (repeatable).",
)
@click.option("--isolated", is_flag=True, help="Ignore every configuration file.")
@click.option("--stdin-filename", help="Check source read from standard input, reported as this path.")
@click.option("--strict", is_flag=True, default=None, help="Also report code under an availability check (.cuda(), CUDA runtime calls, loads without map_location), and downloads of published weights without map_location.")
@click.option("--quiet", "-q", is_flag=True, help="Print findings only, no summary and no warnings.")
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default=None,
    help="Colour the text output: auto (on a terminal; the default), always or never.",
)
@click.option("--no-color", is_flag=True, help="Same as --color never (also: NO_COLOR).")
def check(
    paths: tuple[Path, ...],
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    extend_select: tuple[str, ...],
    extend_ignore: tuple[str, ...],
    exclude: tuple[str, ...],
    extend_exclude: tuple[str, ...],
    force_exclude: bool | None,
    output_format: str,
    output_file: Path | None,
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    show_fixes: bool,
    add_noqa: bool,
    exit_zero: bool,
    statistics: bool,
    show_files: bool,
    show_settings: bool,
    no_cache: bool,
    jobs: int | None,
    config_values: tuple[str, ...],
    isolated: bool,
    stdin_filename: str | None,
    strict: bool | None,
    quiet: bool,
    color: str | None,
    no_color: bool,
) -> None:
    """Check PATHS (default: the current folder) for device bugs."""
    from devlint.engine import check_bytes, check_files, selected_rules, unreadable
    from devlint.reporters import ReportOptions

    if add_noqa and (fix or diff):
        _fail("--add-noqa cannot be used with --fix or --diff")
    if add_noqa and stdin_filename is not None:
        _fail("--add-noqa cannot be used with --stdin-filename (it edits files in place)")
    if statistics and output_format not in ("text", "json"):
        _fail(f"--statistics prints text or JSON, not {output_format}")
    if output_file is not None:
        _check_writable(output_file)
    targets = list(paths) or [Path(".")]
    try:
        for option, value in (
            ("--select", select),
            ("--ignore", ignore),
            ("--extend-select", extend_select),
            ("--extend-ignore", extend_ignore),
        ):
            validate_selectors(_codes(value) or (), option)
        resolver = _resolver(
            config_values,
            isolated,
            CommandLine(
                select=_codes(select),
                ignore=_codes(ignore),
                extend_select=_codes(extend_select),
                extend_ignore=_codes(extend_ignore),
                exclude=_patterns(exclude),
                extend_exclude=_patterns(extend_exclude),
                strict=strict or None,
                force_exclude=force_exclude,
            ),
        )
        if show_settings:
            _show_settings(resolver, Path(stdin_filename) if stdin_filename else targets[0])
            return
        from devlint.discovery import FileFinder

        finder = FileFinder(resolver=resolver)
        entries = [] if stdin_filename is not None else list(finder.files_with_settings(targets))
        stdin_settings = resolver.for_path(Path(stdin_filename)) if stdin_filename is not None else None
    except ConfigError as error:
        _fail(str(error))
        return
    selected_rules(Settings())  # fail early on a broken rule set, before any worker starts
    if show_files:
        for display in sorted(display for _, display, _ in entries):
            click.echo(display)
        if not entries and not quiet:
            _warn(NO_FILES_WARNING)
        return
    if stdin_filename is None and not entries and not finder.unreadable and not quiet:
        _warn(NO_FILES_WARNING)

    options = ReportOptions(unsafe_fixes=unsafe_fixes, show_fixes=show_fixes)
    want_fixes = fix or diff
    report_to_stderr = False
    if stdin_filename is not None:
        assert stdin_settings is not None
        data = sys.stdin.buffer.read()
        stdin_path = Path(stdin_filename)
        if stdin_settings.force_exclude and finder.force_excluded(stdin_path, stdin_settings):
            # An editor asked about an excluded file: nothing to report, the buffer unchanged.
            from devlint.engine import FileResult

            results = [FileResult(stdin_filename)]
            if fix and not diff:
                sys.stdout.buffer.write(data)
                sys.exit(EXIT_CLEAN)
        else:
            results = [check_bytes(data, stdin_path, stdin_filename, stdin_settings, keep_source=want_fixes)]
    else:
        cache = None
        if not no_cache and not want_fixes and not add_noqa:
            from devlint.cache import Caches

            cache = Caches()
        results = check_files(entries, Settings(), jobs=jobs, keep_source=want_fixes or add_noqa, cache=cache)
        results += [unreadable(path, str(path), settings, error) for path, settings, error in finder.unreadable]

    if add_noqa:
        _add_noqa(results, quiet)
        return

    fixed_by_file: dict[str, Any] = {}
    if want_fixes:
        from devlint.fixer import apply_fixes

        outcome = apply_fixes(results, Settings(), unsafe=unsafe_fixes, write=fix and not diff, stdin=stdin_filename is not None)
        fixed_by_file = outcome.fixed_by_file
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
        for message in outcome.errors:
            click.echo(f"devlint: {message}", err=True)
        if diff:
            _diff_summary(outcome.fixed, findings, fixed_by_file, options, quiet)
            sys.exit(EXIT_CLEAN if exit_zero or not outcome.diff else EXIT_FINDINGS)
        if fix and not quiet and not show_fixes:
            click.echo(f"Fixed {outcome.fixed} problem{'s' if outcome.fixed != 1 else ''}.", err=True)
    else:
        findings = sorted((f for result in results for f in result.findings), key=lambda f: f.sort_key)

    stream = sys.stderr if report_to_stderr else sys.stdout
    colored = _use_color(color, no_color, stream.isatty(), to_file=output_file is not None)
    options = ReportOptions(color=colored, unsafe_fixes=unsafe_fixes, show_fixes=show_fixes and not fix)
    _emit(findings, output_format, output_file, statistics, quiet, options, report_to_stderr, fixed_by_file if show_fixes else {})
    if any(f.code == "DL999" for f in findings):
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_CLEAN if exit_zero or not findings else EXIT_FINDINGS)


def _check_writable(output_file: Path) -> None:
    """Fail before the check, not after it, when the report cannot be written where asked."""
    folder = output_file.parent
    if not os.path.exists(folder):
        _fail(f"cannot write {output_file}: no such folder {folder}")
    if not os.path.isdir(folder):
        _fail(f"cannot write {output_file}: {folder} is not a folder")
    target = output_file if os.path.exists(output_file) else folder
    if not os.access(target, os.W_OK):
        _fail(f"cannot write {output_file}: permission denied")


def _resolver(config_values: Sequence[str], isolated: bool, command_line: CommandLine) -> SettingsResolver:
    """`--config` is a file (at most one) or a `key = value` override (any number), as in ruff."""
    config_file: Path | None = None
    overrides: dict[str, Any] = {}
    for value in config_values:
        candidate = Path(value)
        if candidate.is_file():
            if config_file is not None:
                raise ConfigError(f"--config: give at most one configuration file ({config_file}, {value})")
            config_file = candidate
        elif "=" in value:
            overrides.update(parse_override(value))
        else:
            raise ConfigError(f"{value}: no such configuration file")
    if isolated and config_file is not None:
        raise ConfigError("--isolated ignores configuration files: it cannot be used with --config PATH")
    if overrides:
        command_line = CommandLine(**{**command_line.__dict__, "values": overrides})
    return SettingsResolver(command_line, config_file=config_file, isolated=isolated)


def _use_color(choice: str | None, no_color: bool, on_terminal: bool, *, to_file: bool = False) -> bool:
    """--color and --no-color first; then FORCE_COLOR, then NO_COLOR (ruff's order); then the terminal.

    A report file is coloured only when asked for by name (`--color always`).
    """
    if choice == "always":
        return True
    if choice == "never" or no_color or to_file:
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("NO_COLOR"):
        return False
    return on_terminal


def _show_settings(resolver: SettingsResolver, path: Path) -> None:
    from devlint.engine import selected_rules
    from devlint.patterns import describe

    settings = resolver.for_path(path)
    enabled, _ = selected_rules(settings)

    def listing(values: Sequence[str]) -> str:
        return "[" + ", ".join(f'"{value}"' for value in values) + "]"

    lines = [
        f"Resolved settings for: {path}",
        f"Settings path: {settings.source if settings.source is not None else '(none: the defaults)'}",
        f"root = \"{settings.root}\"",
        f"select = {listing(settings.select)}",
        f"extend-select = {listing(settings.extend_select)}",
        f"ignore = {listing(settings.ignore)}",
        f"extend-ignore = {listing(settings.extend_ignore)}",
        f"exclude = {listing([describe(p, settings.root) for p in settings.exclude])}",
        f"extend-exclude = {listing([describe(p, settings.root) for p in settings.extend_exclude])}",
        f"force-exclude = {str(settings.force_exclude).lower()}",
        f"strict = {str(settings.strict).lower()}",
        f"device-variables = {listing(settings.device_variables)}",
        f"loaders = {listing(settings.loaders)}",
        f"move-helpers = {listing(settings.move_helpers)}",
        "per-file-ignores = {"
        + ", ".join(f'"{describe(pattern, settings.root)}" = {listing(codes)}' for pattern, codes in settings.per_file_ignores)
        + "}",
        f"enabled = {listing(sorted(enabled))}",
    ]
    click.echo("\n".join(lines))


def _add_noqa(results: Sequence[Any], quiet: bool) -> None:
    from devlint.atomic import ReadOnlyFile, rewrite
    from devlint.reading import read_regular
    from devlint.suppression import add_noqa

    added = 0
    for result in results:
        # Unreadable files and devlint's own failures are not the code's to silence.
        findings = [f for f in result.findings if f.code not in ("DL000", "DL999")]
        if result.source is None or not findings:
            continue
        text, count = add_noqa(result.source.text, findings)
        if not count:
            continue
        path = Path(result.path)
        try:
            if read_regular(path)[0] != result.source.encode(result.source.text):
                click.echo(f"devlint: {result.path}: changed on disk while devlint ran; no noqa added", err=True)
                continue
            rewrite(path, result.source.encode(text))
        except ReadOnlyFile:
            click.echo(f"devlint: {result.path}: the file is read-only; no noqa added", err=True)
            continue
        except OSError as error:
            click.echo(f"devlint: {result.path}: cannot write ({error.strerror or error}); file left unchanged", err=True)
            continue
        added += count
    if not quiet:
        click.echo(f"Added {added} noqa directive{'s' if added != 1 else ''}.", err=True)


def _diff_summary(fixed: int, remaining: Sequence[Finding], fixed_by_file: Any, options: Any, quiet: bool) -> None:
    from devlint.reporters.text import diff_summary, fix_summary

    if quiet:
        return
    if options.show_fixes and fixed_by_file:
        click.echo(fix_summary(fixed_by_file, _rule_names(), verb="Would fix"), err=True, nl=False)
    line = diff_summary(fixed, remaining, options)
    if line:
        click.echo(line, err=True)


def _rule_names() -> dict[str, str]:
    from devlint.rules import all_infos

    return {info.code: info.name for info in all_infos()}


def _emit(
    findings: list[Finding],
    output_format: str,
    output_file: Path | None,
    statistics: bool,
    quiet: bool,
    options: Any,
    to_stderr: bool = False,
    fixed_by_file: Any = None,
) -> None:
    from devlint.reporters import render
    from devlint.reporters.text import fix_summary, statistics as render_statistics, statistics_json

    if statistics and output_format == "json":
        rendered = statistics_json(findings, options)
    elif statistics:
        rendered = render_statistics(findings, options)
    else:
        rendered = render(output_format, findings, options)
    if output_format == "text" and fixed_by_file:
        # ruff's --show-fixes: the applied fixes, before the summary line.
        body = rendered.splitlines(keepends=True)
        rendered = "".join(body[:-1]) + fix_summary(fixed_by_file, _rule_names()) + "\n" + body[-1]
    if quiet and output_format == "text":
        rendered = "".join(line + "\n" for line in rendered.splitlines()[:-1])
    if output_file is not None:
        try:
            output_file.write_text(rendered, encoding="utf-8")
        except OSError as error:
            _fail(f"cannot write {output_file}: {error.strerror}")
    else:
        # click strips colour from anything but a terminal unless told: --color always / FORCE_COLOR tell it.
        click.echo(rendered, nl=False, err=to_stderr, color=options.color)


@main.command()
@click.option("--format", "--output-format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
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
@click.argument("rule", required=False)
@click.option("--all", "all_rules", is_flag=True, help="Print every rule's page.")
def explain(rule: str | None, all_rules: bool) -> None:
    """Print the documentation page of a rule, by code or name (DL201, unmoved-batch)."""
    from devlint.pages import rule_page
    from devlint.rules import all_infos

    infos = all_infos()
    if all_rules:
        if rule is not None:
            _fail("give a rule or --all, not both")
        pages = []
        for info in infos:
            page = rule_page(info.code)
            if page is None:
                _fail(f"no documentation page found for {info.code}")
            pages.append(page if page.endswith("\n") else page + "\n")
        click.echo("\n".join(pages), nl=False)
        return
    if rule is None:
        _fail("give a rule code or name (see `devlint rules`), or --all")
        return
    by_name = {info.name: info.code for info in infos}
    code = by_name.get(rule.lower(), rule.upper())
    if code not in {i.code for i in infos}:
        _fail(f"unknown rule code {rule!r} (see `devlint rules`)")
    page = rule_page(code)
    if page is None:
        _fail(f"no documentation page found for {code}")
    click.echo(page, nl=not page.endswith("\n"))


@main.command()
def server() -> None:
    """Run the language server on standard input and output (for editors; extra `devlint[server]`)."""
    from devlint.server import missing_dependency, serve

    problem = missing_dependency()
    if problem is not None:
        _fail(problem)
    serve()
