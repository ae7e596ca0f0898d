"""The pytest plugin, run in a subprocess on small test files."""

from __future__ import annotations

import sys

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
    result = pytester.runpytest_subprocess("--strict-markers")
    result.assert_outcomes(passed=1)


def test_help_lists_the_options_and_the_markers(pytester: pytest.Pytester):
    # In process: listing options runs no test and imports nothing heavy.
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(
        [
            "*--devlint-runtime*",
            "*--devlint-simulate-cuda*",
            "*--devlint-simulate-cuda-devices=N*",
            "*devlint_runtime (string)*",
            "*devlint_simulate_cuda (string)*",
            "*devlint_simulate_cuda_devices (string)*",
        ]
    )
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(
        [
            "@pytest.mark.devlint_runtime(**options):*",
            "@pytest.mark.no_devlint_runtime:*",
            "@pytest.mark.devlint_simulate_cuda(devices=1):*",
            "@pytest.mark.no_devlint_simulate_cuda:*",
        ]
    )


@pytest.mark.parametrize(
    ("ini", "args", "message"),
    [
        ("devlint_runtime = maybe", [], "ERROR: devlint: ini option devlint_runtime must be true or false, not 'maybe'"),
        ("devlint_simulate_cuda = 2", [], "ERROR: devlint: ini option devlint_simulate_cuda must be true or false, not '2'"),
        (
            "devlint_simulate_cuda_devices = 0",
            [],
            "ERROR: devlint: ini option devlint_simulate_cuda_devices must be a whole number of at least 1, not '0'",
        ),
        (
            "",
            ["--devlint-simulate-cuda-devices", "two"],
            "ERROR: devlint: --devlint-simulate-cuda-devices must be a whole number of at least 1, not 'two'",
        ),
    ],
)
def test_a_bad_setting_is_a_usage_error_at_start(pytester: pytest.Pytester, ini, args, message):
    pytester.makeini(f"[pytest]\n{ini}\n")
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stderr.str()
    assert "passed" not in result.stdout.str()  # nothing ran


WITHOUT_TORCH = """
import sys

sys.modules["torch"] = None  # as if torch were not installed
import pytest

sys.exit(pytest.main(sys.argv[1:]))
"""


@pytest.mark.parametrize(
    ("tests", "args", "what"),
    [
        ("def test_a():\n    pass\n", ["--devlint-runtime"], "--devlint-runtime"),
        ("def test_a():\n    pass\n", ["--devlint-simulate-cuda"], "--devlint-simulate-cuda"),
        (
            "import pytest\n\n@pytest.mark.devlint_runtime\ndef test_a():\n    pass\n",
            [],
            "@pytest.mark.devlint_runtime (test_models.py::test_a)",
        ),
        (
            "import pytest\n\n@pytest.mark.devlint_simulate_cuda\ndef test_a():\n    pass\n",
            [],
            "@pytest.mark.devlint_simulate_cuda (test_models.py::test_a)",
        ),
        ("def test_a(devlint_runtime):\n    pass\n", [], "the devlint_runtime fixture (test_models.py::test_a)"),
        ("def test_a(simulated_cuda):\n    pass\n", [], "the simulated_cuda fixture (test_models.py::test_a)"),
    ],
)
def test_without_torch_one_clear_usage_error(pytester: pytest.Pytester, tests, args, what):
    pytester.makepyfile(test_models=tests)
    runner = pytester.makepyfile(run_without_torch=WITHOUT_TORCH)
    result = pytester.run(sys.executable, str(runner), "-p", "no:cacheprovider", "test_models.py", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    assert [line for line in result.stderr.lines if line] == [
        f"ERROR: devlint: {what} needs torch, which is not installed: pip install 'devlint[runtime]'"
    ]
    assert "passed" not in result.stdout.str() and "failed" not in result.stdout.str()


def test_without_torch_a_run_that_asks_nothing_of_devlint_passes(pytester: pytest.Pytester):
    pytester.makepyfile(test_models="def test_a():\n    pass\n")
    runner = pytester.makepyfile(run_without_torch=WITHOUT_TORCH)
    result = pytester.run(sys.executable, str(runner), "-p", "no:cacheprovider", "test_models.py")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*1 passed*"])
