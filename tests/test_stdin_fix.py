"""`--fix --stdin-filename` (editors): standard output is the new buffer and nothing else."""

from __future__ import annotations

import subprocess
import sys


def run(data: bytes, *args: str) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-m", "devlint", "check", "--no-cache", "--stdin-filename", "t.py", *args]
    return subprocess.run(command, input=data, capture_output=True, check=False)


def test_the_fixed_source_alone_goes_to_stdout_and_the_report_to_stderr() -> None:
    data = b"import numpy as np\nimport torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nx = torch.ones(2).to(device)\ny = x.numpy()\n"
    done = run(data, "--fix")
    assert done.stdout == data.replace(b"x.numpy()", b"x.cpu().numpy()")
    assert b"Fixed 1 problem." in done.stderr
    assert done.returncode == 0


def test_a_skipped_file_comes_back_unchanged() -> None:
    data = b"import torch\n# devlint: skip-file\nx = torch.load('a')\n"
    done = run(data, "--fix")
    assert done.stdout == data
    assert done.returncode == 0


def test_undecodable_input_comes_back_byte_for_byte() -> None:
    data = b'x = "\xe9"\nimport torch\n'
    done = run(data, "--fix")
    assert done.stdout == data
    assert b"DL000" in done.stderr
    assert done.returncode == 1
