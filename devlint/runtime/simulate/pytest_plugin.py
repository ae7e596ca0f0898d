"""pytest plugin for simulated CUDA (issue 6); must import without torch.

``pytest --devlint-simulate-cuda`` runs every test (its fixtures included)
as if a CUDA GPU were present; ``@pytest.mark.devlint_simulate_cuda`` (or
``devlint_simulate_cuda(devices=2)``) does it for one test, and the
``simulated_cuda`` fixture gives the simulated machine inside a test.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

import pytest

MARKER = "devlint_simulate_cuda"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("devlint")
    group.addoption(
        "--devlint-simulate-cuda",
        action="store_true",
        default=False,
        help="run every test as if a CUDA GPU were present (simulated on the CPU); "
        "device mismatches raise devlint.runtime.DeviceMismatchError",
    )
    group.addoption(
        "--devlint-simulate-cuda-devices",
        type=int,
        default=1,
        metavar="N",
        help="number of simulated CUDA devices (default 1)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(devices=1): run this test as if a CUDA GPU were present (devlint simulated CUDA)",
    )


def _devices(item: pytest.Item) -> int | None:
    marker = item.get_closest_marker(MARKER)
    if marker is not None:
        devices = marker.kwargs.get("devices", marker.args[0] if marker.args else None)
        return int(devices) if devices is not None else item.config.getoption("--devlint-simulate-cuda-devices")
    if item.config.getoption("--devlint-simulate-cuda"):
        return int(item.config.getoption("--devlint-simulate-cuda-devices"))
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, None]:
    devices = _devices(item)
    if devices is None:
        yield
        return
    from devlint.runtime.simulate.session import simulate_cuda

    with simulate_cuda(devices=devices):
        yield


@pytest.fixture
def simulated_cuda() -> Iterator[Any]:
    """The simulated CUDA machine, active for the rest of the test."""
    from devlint.runtime.simulate.session import simulate_cuda

    with simulate_cuda() as machine:
        yield machine
