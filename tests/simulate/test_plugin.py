"""The pytest plugin's simulated CUDA: option, ini keys, markers, fixtures, start before collection."""

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")

CONFTEST = textwrap.dedent(
    """
    import torch

    # chosen when pytest imports this file, before any test runs
    CONFTEST_DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    """
)

TESTS = textwrap.dedent(
    """
    import pytest
    import torch
    import torch.nn.functional as F

    from conftest import CONFTEST_DEVICE

    DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # chosen at import


    def test_batch_left_on_cpu():
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model = torch.nn.Linear(2, 2).to(device)
        model(torch.ones(1, 2))


    def test_device_chosen_at_import():
        assert (DEVICE.type, CONFTEST_DEVICE.type) == ("cuda", "cuda")
        logits = torch.nn.Linear(2, 3).to(DEVICE)(torch.ones(4, 2, device=DEVICE))
        F.cross_entropy(logits, torch.tensor([0, 1, 2, 0]))


    @pytest.mark.devlint_simulate_cuda
    def test_marked():
        assert torch.cuda.is_available()


    @pytest.mark.devlint_simulate_cuda(devices=2)
    def test_marked_two():
        assert torch.cuda.device_count() == 2


    @pytest.mark.no_devlint_simulate_cuda
    def test_opted_out():
        assert not torch.cuda.is_available()


    def test_fixture(devlint_simulate_cuda):
        assert torch.cuda.is_available() and devlint_simulate_cuda.devices >= 1


    def test_old_fixture_name(simulated_cuda):
        assert torch.cuda.is_available()


    def test_device_count():
        print("DEVICE COUNT", torch.cuda.device_count() if torch.cuda.is_available() else 0)
    """
)


RUNNER = textwrap.dedent(
    """
    import sys
    import pytest

    base = ["-q", "-rf", "-s", "--strict-markers", "-p", "no:cacheprovider", "test_model.py"]
    runs = {
        "PLAIN": [],
        "SIMULATED": ["--devlint-simulate-cuda"],
        "INI": ["-c", "ini_two.ini", "--rootdir", "."],
        "OFF": ["-c", "ini_two.ini", "--rootdir", ".", "-p", "no:devlint"],
    }
    for name, extra in runs.items():
        # a fresh import of the test files in each run, as in a run of its own
        sys.modules.pop("test_model", None)
        sys.modules.pop("conftest", None)
        print(f"=== {name}", flush=True)
        code = pytest.main(base + extra)
        print(f"=== {name} EXIT {int(code)}", flush=True)
    """
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every run in one interpreter, so torch is imported once."""
    where = tmp_path_factory.mktemp("plugin")
    (where / "conftest.py").write_text(CONFTEST)
    (where / "test_model.py").write_text(TESTS)
    (where / "ini_two.ini").write_text("[pytest]\ndevlint_simulate_cuda = true\ndevlint_simulate_cuda_devices = 2\n")
    (where / "runner.py").write_text(RUNNER)
    result = subprocess.run(
        [sys.executable, "runner.py"], cwd=where, capture_output=True, text=True, timeout=300
    )
    found = {}
    for name in ("PLAIN", "SIMULATED", "INI", "OFF"):
        start = result.stdout.index(f"=== {name}\n")
        end = result.stdout.index(f"=== {name} EXIT")
        code = int(result.stdout[end:].split("EXIT ", 1)[1].split()[0])
        found[name] = (result.stdout[start:end], code)
    return found, result


def test_plain_run_simulates_marked_tests_and_fixtures_only(runs):
    found, result = runs
    output, code = found["PLAIN"]
    assert code == 1, result.stdout + result.stderr
    # the device chosen at import is the CPU: only that test notices
    assert "FAILED test_model.py::test_device_chosen_at_import - AssertionError" in output
    assert "1 failed, 7 passed" in output
    assert "DEVICE COUNT 0" in output


def test_option_simulates_the_session_from_collection_on(runs):
    found, result = runs
    output, code = found["SIMULATED"]
    assert code == 1, result.stdout + result.stderr
    assert "2 failed, 6 passed" in output
    assert "FAILED test_model.py::test_batch_left_on_cpu - devlint.runtime.errors.D" in output
    assert "test_model.py:14: model(torch.ones(1, 2))" in output
    # the device chosen at import (test module and conftest) is the simulated GPU
    assert "FAILED test_model.py::test_device_chosen_at_import - devlint.runtime.errors.D" in output
    assert "DEVICE COUNT 1" in output


def test_failures_end_at_the_users_line_without_torchs_frames(runs):
    found, _ = runs
    output, _ = found["SIMULATED"]
    section = output[output.index("_ test_device_chosen_at_import _") :]
    assert "handle_torch_function" not in section
    assert "torch/overrides.py" not in section and "torch/nn/" not in section
    assert "devlint/runtime" not in section
    assert "test_model.py:20: DeviceMismatchError" in section


def test_ini_keys_simulate_and_set_the_device_count(runs):
    found, result = runs
    output, code = found["INI"]
    assert code == 1, result.stdout + result.stderr
    assert "2 failed, 6 passed" in output
    assert "DEVICE COUNT 2" in output


def test_p_no_devlint_turns_the_whole_plugin_off(runs):
    found, result = runs
    output, code = found["OFF"]
    # nothing is simulated, whatever the ini file says, and devlint's fixtures are gone
    assert code == 1
    assert "FAILED test_model.py::test_device_chosen_at_import - AssertionError" in output
    assert "FAILED test_model.py::test_marked - AssertionError" in output
    assert "fixture 'devlint_simulate_cuda' not found" in output
    assert "DEVICE COUNT 0" in output
