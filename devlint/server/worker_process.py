"""The server's handle on its analysis worker process: start, ask, kill."""

from __future__ import annotations

import asyncio
import sys

from devlint.server import jobs
from devlint.server.jobs import Job, Outcome


class WorkerGone(Exception):
    """The worker exited (killed on purpose, or it crashed) before answering."""


class WorkerProcess:
    """One `python -m devlint.server.worker`, answering one job at a time."""

    def __init__(self) -> None:
        self._process: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()

    async def _started(self) -> asyncio.subprocess.Process:
        if self._process is None or self._process.returncode is not None:
            # A worker that exited on its own (a crash) is replaced too.
            self._process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "devlint.server.worker",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
            )
        return self._process

    async def start(self) -> None:
        """Start the worker ahead of the first job: its imports take a few tenths of a second."""
        await self._started()

    async def run(self, job: Job) -> Outcome:
        async with self._lock:
            process = await self._started()
            assert process.stdin is not None and process.stdout is not None
            try:
                process.stdin.write(jobs.encode(job))
                await process.stdin.drain()
                header = await process.stdout.readexactly(jobs.header_size())
                body = await process.stdout.readexactly(jobs.body_size(header))
            except (asyncio.IncompleteReadError, BrokenPipeError, ConnectionResetError) as error:
                self.kill()
                raise WorkerGone(str(error) or type(error).__name__) from None
            outcome = jobs.decode(body)
            assert isinstance(outcome, Outcome)
            return outcome

    def kill(self) -> None:
        """Stop the worker at once, mid-job if need be; the next job starts a fresh one."""
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            try:
                process.kill()
            except ProcessLookupError:
                pass
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return  # the server's loop is over: the process exits and nobody waits
            # Reaped in the background; until then its returncode is still None.
            loop.create_task(process.wait())

    async def close(self) -> None:
        process = self._process
        if process is None:
            return
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()  # the worker exits at end of input
        try:
            await asyncio.wait_for(process.wait(), timeout=2)
        except asyncio.TimeoutError:
            self.kill()
            await process.wait()
