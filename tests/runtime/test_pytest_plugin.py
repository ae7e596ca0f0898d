"""The pytest plugin, run in a subprocess on small test files."""

from __future__ import annotations

import pytest

# Imported here, before pytester snapshots sys.modules for a test: pytester
# drops the modules a test imported, and torch does not survive a re-import.
try:
    import torch
except ImportError:
    torch = None

pytest_plugins = ["pytester"]
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

TESTS = """
import pytest
import torch
from torch import nn


def mixed():
    layer = nn.Linear(1, 1, bias=False, device="meta")  # PyTorch alone would not raise
    return layer(torch.zeros(1, 1))


def test_plain():
    mixed()


@pytest.mark.no_devlint_runtime
def test_exempt():
    mixed()


@pytest.mark.devlint_runtime
def test_marked():
    mixed()


@pytest.mark.devlint_runtime(mode="warn")
def test_marked_warn():
    mixed()


def test_fixture(devlint_runtime):
    assert devlint_runtime.DeviceMismatchError.__name__ == "DeviceMismatchError"
    mixed()


@pytest.mark.devlint_runtime(mode="loud")
def test_bad_marker():
    pass
"""


@pytest.fixture
def tests_file(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_models=TESTS)
    return pytester


@needs_torch
def test_without_the_option_only_marked_tests_and_the_fixture_check(tests_file: pytest.Pytester):
    result = tests_file.runpytest_subprocess("--strict-markers", "-rf")
    result.assert_outcomes(passed=3, failed=3, warnings=1)
    result.stdout.fnmatch_lines(
        [
            "E   *DeviceMismatchError: device mismatch in layer (Linear)",
            "E   * its parameters are on meta, but these inputs are not:",
            # fnmatch: [[] is a literal "["
            "E   *   args[[]0]  cpu  shape (1, 1)  torch.float32",
            "E   * called from test_models.py:8 in mixed: return layer(torch.zeros(1, 1))",
            "*test_models.py:8: DeviceMismatchWarning: device mismatch in layer (Linear)",
            "FAILED test_models.py::test_marked - *DeviceMismatch*",
            "FAILED test_models.py::test_fixture - *DeviceMismatch*",
            "FAILED test_models.py::test_bad_marker - Failed: @pytest.mark.devlint_runtime*",
        ]
    )
    result.stdout.fnmatch_lines(["@pytest.mark.devlint_runtime: mode must be 'raise' or 'warn', not 'loud'"])
    # pytest hides devlint's own frames: the traceback ends in the user's code.
    result.stdout.fnmatch_lines(["test_models.py:8: DeviceMismatchError"])
    result.stdout.no_fnmatch_line("*interception.py*")


@needs_torch
def test_option_checks_every_test_but_the_exempt_one(tests_file: pytest.Pytester):
    result = tests_file.runpytest_subprocess("--devlint-runtime", "--strict-markers", "-rf")
    result.assert_outcomes(passed=2, failed=4)
    result.stdout.fnmatch_lines(["FAILED test_models.py::test_plain - *DeviceMismatch*"])
    result.stdout.no_fnmatch_line("FAILED test_models.py::test_exempt*")


@needs_torch
def test_ini_option_checks_every_test(tests_file: pytest.Pytester):
    tests_file.makeini("[pytest]\ndevlint_runtime = true\n")
    # In process, to keep the suite fast; the two runs above are subprocesses.
    result = tests_file.runpytest_inprocess("--strict-markers", "-rf")
    result.assert_outcomes(passed=2, failed=4)
    result.stdout.fnmatch_lines(["FAILED test_models.py::test_plain - *DeviceMismatch*"])


def test_plugin_does_not_import_torch_when_unused(pytester: pytest.Pytester):
    pytester.makepyfile(
        """
        import sys

        def test_torch_is_not_loaded(request):
            assert request.config.pluginmanager.has_plugin("devlint")
            assert "torch" not in sys.modules
        """
    )
    # The simulated-CUDA plugin is another plugin; this test is about this one.
    result = pytester.runpytest_subprocess("-p", "no:devlint_simulate", "--strict-markers")
    result.assert_outcomes(passed=1)


def test_help_lists_the_option_and_the_markers(pytester: pytest.Pytester):
    # In process: listing options runs no test and imports nothing heavy.
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["*--devlint-runtime*", "*devlint_runtime (bool)*"])
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.devlint_runtime(**options):*", "@pytest.mark.no_devlint_runtime:*"])
