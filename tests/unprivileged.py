"""Running a command as an unprivileged user, for the tests of permissions (root reads and writes everything)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

NOBODY = 65534
SKIP_REASON = "needs a non-root user: running as root without setpriv, or user 65534 cannot run this Python"


def unprivileged_prefix() -> list[str] | None:
    """The command prefix that runs a command as an unprivileged user ([] when this process is one),
    or None when there is no way to (the test is then skipped)."""
    if sys.platform == "win32":
        return None
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    probe = subprocess.run([*prefix, sys.executable, "-c", "import devlint.cli"], capture_output=True, timeout=60)
    return prefix if probe.returncode == 0 else None
