"""What importing the runtime half costs: no torch until the mode is used."""

from __future__ import annotations

import subprocess
import sys


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_plugin_and_package_import_without_torch():
    result = _run(
        "import sys\n"
        "import devlint.runtime.pytest_plugin\n"
        "import devlint.runtime as dlr\n"
        "from devlint.runtime.errors import DeviceMismatchError\n"
        "assert dlr.DeviceMismatchError is DeviceMismatchError\n"
        "assert issubclass(DeviceMismatchError, RuntimeError)\n"
        "print('torch' in sys.modules)\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "False\n"


def test_error_takes_a_message_alone():
    from devlint.runtime.errors import DeviceMismatchError

    error = DeviceMismatchError("device mismatch in model.fc (Linear)")
    assert str(error) == "device mismatch in model.fc (Linear)"
    assert repr(error) == "DeviceMismatchError('device mismatch in model.fc (Linear)')"
    assert (error.module_path, error.offenders, error.call_site) == ("", (), "")
