"""devlint's pytest plugin: runtime device checks and simulated CUDA (one plugin, ``-p no:devlint``).

- ``--devlint-runtime`` (ini ``devlint_runtime = true``) checks every test
  with ``check_devices()``; ``@pytest.mark.devlint_runtime(**options)`` one
  test; ``@pytest.mark.no_devlint_runtime`` exempts one; the
  ``devlint_runtime`` fixture checks the test that asks for it.
- ``--devlint-simulate-cuda`` (ini ``devlint_simulate_cuda = true``) runs the
  whole session as if a CUDA GPU were present, from before collection, so a
  device chosen when a test module is imported is the simulated GPU;
  ``--devlint-simulate-cuda-devices N`` (ini ``devlint_simulate_cuda_devices``)
  sets the device count; ``@pytest.mark.devlint_simulate_cuda(devices=N)``
  simulates one test; ``@pytest.mark.no_devlint_simulate_cuda`` runs one test
  without; the ``devlint_simulate_cuda`` fixture (also ``simulated_cuda``)
  gives the simulated machine inside a test.

pytest loads this module in every run of every project that has devlint
installed, so it imports torch only when something asks for devlint.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Generator
from types import TracebackType
from typing import Any

import pytest

_RUNTIME = "devlint_runtime"
_NO_RUNTIME = "no_devlint_runtime"
_SIMULATE = "devlint_simulate_cuda"
_NO_SIMULATE = "no_devlint_simulate_cuda"
_DEVICES = "devlint_simulate_cuda_devices"
_FIXTURES = (_RUNTIME, _SIMULATE, "simulated_cuda")
_INSTALL = "pip install 'devlint[runtime]'"

# What the plugin keeps on the config object between hooks.
_SESSION = pytest.StashKey["_SessionSimulation | None"]()
_SETTINGS = pytest.StashKey["_Settings"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("devlint", "devlint runtime device checks and simulated CUDA")
    group.addoption(
        "--devlint-runtime",
        action="store_true",
        default=None,
        help="check that every nn.Module call in every test has its tensors on one device",
    )
    group.addoption(
        "--devlint-simulate-cuda",
        action="store_true",
        default=None,
        help="run the session (collection, fixtures and tests) as if a CUDA GPU were present, "
        "simulated on the CPU; device mismatches raise devlint.runtime.DeviceMismatchError",
    )
    group.addoption(
        "--devlint-simulate-cuda-devices",
        default=None,
        metavar="N",
        help="number of simulated CUDA devices (default 1)",
    )
    parser.addini(_RUNTIME, type="string", default="false", help="check every test with devlint.runtime (as --devlint-runtime)")
    parser.addini(
        _SIMULATE, type="string", default="false", help="simulate CUDA for the whole session (as --devlint-simulate-cuda)"
    )
    parser.addini(_DEVICES, type="string", default="1", help="number of simulated CUDA devices (default 1)")


class _Settings:
    """The plugin's options, read once from the command line and the ini file, and checked."""

    def __init__(self, config: pytest.Config) -> None:
        self.runtime = _switch(config, "--devlint-runtime", _RUNTIME)
        self.simulate = _switch(config, "--devlint-simulate-cuda", _SIMULATE)
        self.devices = _device_count(config)


def _option(config: pytest.Config, name: str) -> Any:
    # Early in start-up (before pytest_configure) only the known arguments are parsed.
    value = config.getoption(name, default=None)
    if value is None:
        value = getattr(config.known_args_namespace, name.lstrip("-").replace("-", "_"), None)
    return value


def _switch(config: pytest.Config, option: str, ini: str) -> bool:
    value = _option(config, option)
    if value is not None:
        return bool(value)
    text = str(config.getini(ini)).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("", "0", "false", "no", "off"):
        return False
    raise pytest.UsageError(f"devlint: ini option {ini} must be true or false, not {config.getini(ini)!r}")


def _device_count(config: pytest.Config) -> int:
    value = _option(config, "--devlint-simulate-cuda-devices")
    where = "--devlint-simulate-cuda-devices" if value is not None else f"ini option {_DEVICES}"
    text = str(value if value is not None else config.getini(_DEVICES)).strip()
    try:
        devices = int(text)
    except ValueError:
        devices = 0
    if devices < 1:
        raise pytest.UsageError(f"devlint: {where} must be a whole number of at least 1, not {text!r}")
    return devices


def _torch_missing() -> bool:
    return importlib.util.find_spec("torch") is None


def _needs_torch(what: str) -> pytest.UsageError:
    return pytest.UsageError(f"devlint: {what} needs torch, which is not installed: {_INSTALL}")


class _SessionSimulation:
    """The simulation started for the whole session, paused around tests that opt out."""

    def __init__(self, devices: int) -> None:
        self.devices = devices
        self._context: Any = None

    def start(self) -> None:
        from devlint.runtime.simulate.session import simulate_cuda

        self._context = simulate_cuda(devices=self.devices)
        self._context.__enter__()

    def stop(self) -> None:
        if self._context is not None:
            context, self._context = self._context, None
            context.__exit__(None, None, None)

    @property
    def running(self) -> bool:
        return self._context is not None


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    # Before any conftest.py or test module is imported: a device chosen at
    # import time (DEVICE = "cuda" if torch.cuda.is_available() else "cpu")
    # must see the simulated GPU.
    settings = _Settings(early_config)
    early_config.stash[_SESSION] = None
    if settings.simulate:
        if _torch_missing():
            raise _needs_torch("--devlint-simulate-cuda")
        session = _SessionSimulation(settings.devices)
        session.start()
        early_config.stash[_SESSION] = session


def pytest_configure(config: pytest.Config) -> None:
    settings = config.stash[_SETTINGS] = _Settings(config)  # a bad ini value is a usage error at start
    if settings.runtime and _torch_missing():
        raise _needs_torch("--devlint-runtime")
    if _SESSION not in config.stash:  # registered after start-up (pytester, -p in a run)
        config.stash[_SESSION] = None
        if settings.simulate:
            if _torch_missing():
                raise _needs_torch("--devlint-simulate-cuda")
            session = _SessionSimulation(settings.devices)
            session.start()
            config.stash[_SESSION] = session
    config.addinivalue_line(
        "markers",
        f"{_RUNTIME}(**options): check that every nn.Module call in this test has its tensors on one "
        "device; options go to devlint.runtime.check_devices (mode, exempt, check_parameterless)",
    )
    config.addinivalue_line("markers", f"{_NO_RUNTIME}: do not check this test under --devlint-runtime")
    config.addinivalue_line(
        "markers",
        f"{_SIMULATE}(devices=1): run this test as if a CUDA GPU were present (devlint simulated CUDA)",
    )
    config.addinivalue_line("markers", f"{_NO_SIMULATE}: run this test without simulated CUDA")


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(_SESSION, None)
    if session is not None:
        session.stop()


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _torch_missing():
        return
    for item in items:
        for marker in (_RUNTIME, _SIMULATE):
            if item.get_closest_marker(marker) is not None:
                raise _needs_torch(f"@pytest.mark.{marker} ({item.nodeid})")
        used = [name for name in getattr(item, "fixturenames", ()) if name in _FIXTURES]
        if used:
            raise _needs_torch(f"the {used[0]} fixture ({item.nodeid})")


def _checks_everything(config: pytest.Config) -> bool:
    return config.stash[_SETTINGS].runtime


def _options_for(item: pytest.Item) -> dict[str, Any] | None:
    """check_devices keyword arguments for this test, or None when it is not checked."""
    mark = item.get_closest_marker(_RUNTIME)
    if mark is not None:
        if mark.args:
            raise pytest.UsageError(
                f"{item.nodeid}: @pytest.mark.{_RUNTIME} takes keyword arguments only "
                "(mode=..., exempt=..., check_parameterless=...)"
            )
        return dict(mark.kwargs)
    if item.get_closest_marker(_NO_RUNTIME) is not None:
        return None
    if _checks_everything(item.config):
        return {}
    return None


def _simulated_devices(item: pytest.Item) -> int | None:
    """How many devices this test's own simulation has, or None for none of its own."""
    marker = item.get_closest_marker(_SIMULATE)
    if marker is None:
        return None
    devices = marker.kwargs.get("devices", marker.args[0] if marker.args else None)
    if devices is None:
        return item.config.stash[_SETTINGS].devices
    if not isinstance(devices, int) or isinstance(devices, bool) or devices < 1:
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.{_SIMULATE}(devices=...) needs a positive int, got {devices!r}")
    return devices


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, Any]:
    session: _SessionSimulation | None = item.config.stash.get(_SESSION, None)
    own = _simulated_devices(item)
    opted_out = item.get_closest_marker(_NO_SIMULATE) is not None and own is None
    pause = session is not None and session.running and (opted_out or (own is not None and own != session.devices))
    if pause:
        session.stop()  # type: ignore[union-attr]
    try:
        if own is not None and (session is None or not session.running):
            from devlint.runtime.simulate.session import simulate_cuda

            with simulate_cuda(devices=own):
                return (yield)
        return (yield)
    finally:
        if pause:
            session.start()  # type: ignore[union-attr]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, Any, Any]:
    try:
        return (yield)
    except BaseException as error:
        _hide_library_frames(error)
        raise


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    try:
        options = _options_for(item)
        if options is None:
            return (yield)
        from devlint.runtime.check import check_devices

        try:
            check = check_devices(**options)
        except (TypeError, ValueError) as error:
            raise pytest.fail.Exception(f"@pytest.mark.{_RUNTIME}: {error}", pytrace=False) from None
        with check:
            return (yield)
    except BaseException as error:
        _hide_library_frames(error)
        raise


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, Any]:
    try:
        return (yield)
    except BaseException as error:
        _hide_library_frames(error)
        raise


def _hide_library_frames(error: BaseException) -> None:
    """Drop torch's and devlint's frames from a device mismatch's traceback.

    Between the user's frames they are nn.Module's call machinery; at the end,
    the place where devlint or the simulation found the mismatch, reached for
    torch.nn.functional through torch's ``handle_torch_function``, whose
    40-line docstring pytest would print. The traceback then ends at the
    user's line.
    """
    from devlint.runtime.errors import DeviceMismatchError

    if not isinstance(error, DeviceMismatchError):
        return
    import torch

    hidden = (os.path.dirname(torch.__file__) + os.sep, os.path.dirname(__file__) + os.sep)
    kept: list[TracebackType] = []
    tb = error.__traceback__
    while tb is not None:
        if not os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(hidden):
            kept.append(tb)
        tb = tb.tb_next
    if not kept:
        return
    for outer, inner in zip(kept, kept[1:]):
        outer.tb_next = inner
    kept[-1].tb_next = None
    error.__traceback__ = kept[0]


@pytest.fixture
def devlint_runtime() -> Generator[Any, None, None]:
    """Check the devices of every module call in this test; gives the devlint.runtime module."""
    import devlint.runtime
    from devlint.runtime.check import check_devices

    with check_devices():
        yield devlint.runtime


@pytest.fixture
def devlint_simulate_cuda() -> Generator[Any, None, None]:
    """The simulated CUDA machine, active for the rest of the test (the session's, if one runs)."""
    from devlint.runtime.simulate.session import active_machine, simulate_cuda

    running = active_machine()
    with simulate_cuda(devices=running.devices if running is not None else 1) as machine:
        yield machine


@pytest.fixture
def simulated_cuda(devlint_simulate_cuda: Any) -> Any:
    """The old name of the ``devlint_simulate_cuda`` fixture."""
    return devlint_simulate_cuda
