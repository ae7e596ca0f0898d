"""pytest plugin: run tests under ``devlint.runtime.check_devices()``.

- ``pytest --devlint-runtime`` (or ``devlint_runtime = true`` in the ini
  file) checks every test;
- ``@pytest.mark.devlint_runtime`` checks one test; its keyword arguments go
  to ``check_devices`` (``@pytest.mark.devlint_runtime(mode="warn")``);
- ``@pytest.mark.no_devlint_runtime`` exempts one test from the option;
- the ``devlint_runtime`` fixture checks the test that asks for it and returns
  the ``devlint.runtime`` module.

pytest loads this module in every run of every project that has devlint
installed, so it imports torch only when a test is actually checked.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

_MARK = "devlint_runtime"
_NO_MARK = "no_devlint_runtime"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("devlint", "devlint runtime device checks")
    group.addoption(
        "--devlint-runtime",
        action="store_true",
        default=None,
        help="check that every nn.Module call in every test has its tensors on one device",
    )
    parser.addini(
        "devlint_runtime",
        type="bool",
        default=False,
        help="check every test with devlint.runtime (as --devlint-runtime)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{_MARK}(**options): check that every nn.Module call in this test has its tensors on one "
        "device; options go to devlint.runtime.check_devices (mode, exempt, check_parameterless)",
    )
    config.addinivalue_line("markers", f"{_NO_MARK}: do not check this test under --devlint-runtime")


def _checks_everything(config: pytest.Config) -> bool:
    option = config.getoption("--devlint-runtime")
    if option is not None:
        return bool(option)
    return bool(config.getini("devlint_runtime"))


def _options_for(item: pytest.Item) -> dict[str, Any] | None:
    """check_devices keyword arguments for this test, or None when it is not checked."""
    mark = item.get_closest_marker(_MARK)
    if mark is not None:
        if mark.args:
            raise pytest.UsageError(
                f"{item.nodeid}: @pytest.mark.{_MARK} takes keyword arguments only "
                "(mode=..., exempt=..., check_parameterless=...)"
            )
        return dict(mark.kwargs)
    if item.get_closest_marker(_NO_MARK) is not None:
        return None
    if _checks_everything(item.config):
        return {}
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, None]:
    options = _options_for(item)
    if options is None:
        yield
        return
    from devlint.runtime.check import check_devices

    try:
        check = check_devices(**options)
    except (TypeError, ValueError) as error:
        raise pytest.fail.Exception(f"@pytest.mark.{_MARK}: {error}", pytrace=False) from None
    with check:
        yield


@pytest.fixture
def devlint_runtime() -> Generator[Any, None, None]:
    """Check the devices of every module call in this test; gives the devlint.runtime module."""
    import devlint.runtime
    from devlint.runtime.check import check_devices

    with check_devices():
        yield devlint.runtime
