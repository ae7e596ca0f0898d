"""The pytest plugin: --devlint-simulate-cuda, the marker and the fixture."""

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")

TESTS = textwrap.dedent(
    """
    import pytest
    import torch


    def test_batch_left_on_cpu():
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model = torch.nn.Linear(2, 2).to(device)
        model(torch.ones(1, 2))


    @pytest.mark.devlint_simulate_cuda
    def test_marked():
        assert torch.cuda.is_available()


    @pytest.mark.devlint_simulate_cuda(devices=2)
    def test_marked_two():
        assert torch.cuda.device_count() == 2


    def test_fixture(simulated_cuda):
        assert torch.cuda.is_available() and simulated_cuda.devices == 1
    """
)


RUNNER = textwrap.dedent(
    """
    import sys
    import pytest

    base = ["-q", "--strict-markers", "-p", "no:cacheprovider", "test_model.py"]
    plain = pytest.main(base)
    print("PLAIN EXIT", int(plain), flush=True)
    simulated = pytest.main(base + ["--devlint-simulate-cuda"])
    print("SIMULATED EXIT", int(simulated), flush=True)
    """
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Both runs in one interpreter, so torch is imported once."""
    where = tmp_path_factory.mktemp("plugin")
    (where / "test_model.py").write_text(TESTS)
    (where / "runner.py").write_text(RUNNER)
    result = subprocess.run(
        [sys.executable, "runner.py"], cwd=where, capture_output=True, text=True, timeout=180
    )
    plain, _, simulated = result.stdout.partition("PLAIN EXIT")
    return plain, simulated, result


def test_plain_run_uses_marker_and_fixture_only(runs):
    plain, simulated, result = runs
    assert "4 passed" in plain, result.stdout + result.stderr
    assert simulated.startswith(" 0")


def test_option_simulates_every_test(runs):
    plain, simulated, result = runs
    assert "1 failed, 3 passed" in simulated, result.stdout + result.stderr
    assert "SIMULATED EXIT 1" in simulated
    assert "DeviceMismatchError: simulated CUDA: torch.nn.functional.linear" in simulated
    assert "test_model.py:9: model(torch.ones(1, 2))" in simulated


def test_plugin_imports_without_torch():
    code = "import sys, devlint.runtime.simulate.pytest_plugin; print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "False", result.stderr
