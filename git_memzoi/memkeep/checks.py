"""Running an entry's checks: the :class:`Runner` seam and its ``sh -c`` implementation (io).

memkeep README "Commands" (verify): exit 0 passes, exit 1 fails, anything else (another code, a timeout, a
shell that cannot start) is a tool error that leaves the entry untouched.
"""

from __future__ import annotations

import contextlib
import enum
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from git_memzoi.memkeep.entries import Check

OUTPUT_TAIL_CHARS = 2000


class Outcome(enum.Enum):
    """How one check ended."""

    PASS = "pass"
    FAIL = "fail"
    TOOL_ERROR = "tool_error"


@dataclass(frozen=True)
class CheckResult:
    """One check run: its outcome, exit code (``None`` on timeout or spawn failure), and the output's tail."""

    check: Check
    outcome: Outcome
    exit_code: int | None
    output: str
    duration_ms: int

    @property
    def shown_run(self) -> str:
        """The check's command as it may be printed: credentials masked (:func:`shown`)."""
        return shown(self.check.run)


def shown(text: str) -> str:
    """``text`` (a check command or its output) with every credential masked by the shared classifier
    (:func:`git_memzoi.core.secret_scan.redact`): verify prints both, and an entry or a check can hold one."""
    from git_memzoi.core.secret_scan import redact

    return redact(text)


class Runner(Protocol):
    """Runs one check in ``cwd`` with extra environment variables ``env``."""

    def run(self, check: Check, cwd: Path, env: Mapping[str, str]) -> CheckResult:
        """Run ``check`` and classify its exit."""
        ...


def classify(exit_code: int | None) -> Outcome:
    """Map a check's exit code to an :class:`Outcome` (0 pass, 1 fail, else tool error)."""
    if exit_code == 0:
        return Outcome.PASS
    if exit_code == 1:
        return Outcome.FAIL
    return Outcome.TOOL_ERROR


class ShellRunner:
    """Runs ``sh -c <run>`` with a timeout, stdin closed, output captured (stdout and stderr merged)."""

    def run(self, check: Check, cwd: Path, env: Mapping[str, str]) -> CheckResult:
        """Run ``check``; never raises for the check's own failures."""
        import time

        started = time.monotonic()
        full_env = {**_clean_env(), **env}
        bad = _not_runnable(check.run, env)
        if bad:  # subprocess would raise ValueError before sh starts (an internal error, exit 3, before)
            return CheckResult(check, Outcome.TOOL_ERROR, None, f"cannot start sh: {bad}", _ms(started))
        try:
            proc = subprocess.Popen(
                ["sh", "-c", check.run],
                cwd=cwd,
                env=full_env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, so a timeout stops what sh started too
            )
        except OSError as exc:
            return CheckResult(check, Outcome.TOOL_ERROR, None, f"cannot start sh: {exc}", _ms(started))
        try:
            output, _ = proc.communicate(timeout=check.timeout_s)
        except subprocess.TimeoutExpired as exc:
            _stop_group(proc)
            said = _tail(exc.output) + f"\n(timed out after {check.timeout_s} s)"
            return CheckResult(check, Outcome.TOOL_ERROR, None, said.strip(), _ms(started))
        _stop_group(proc)  # a check's background job (`server & curl ...`) ends with it, whatever it exited with
        return CheckResult(check, classify(proc.returncode), proc.returncode, _tail(output), _ms(started))


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the check's whole process group (``sh`` and what it started: a ``sleep``, a test server, which a
    timeout's kill of ``sh`` alone, or ``sh``'s own exit, left running, re-parented to init), then reap ``sh``.
    A child that left the group (``setsid``) is beyond reach, as it would be for any runner."""
    import signal

    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.kill()
    proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


def _not_runnable(run: str, env: Mapping[str, str]) -> str | None:
    """Why ``run`` with the entry's ``env`` cannot be handed to a process, or ``None``: a NUL or text that is not
    UTF-8 (a lone surrogate) in the command, a variable's name or its value; a name holding ``=``."""
    texts = [("check.run", run)] + [(f"environment.{k}", f"{k}{v}") for k, v in env.items()]
    for where, text in texts:
        if "\0" in text:
            return f"{where} holds a NUL character"
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return f"{where} is not valid UTF-8"
    for name in env:
        if not name or "=" in name:
            return f"environment variable name {name!r} is not valid"
    return None


def _clean_env() -> dict[str, str]:
    # Checks run against the working tree they are started in, never a repository a hook was handed.
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in ("GIT_CONFIG_NOSYSTEM",)}


def _tail(data: bytes | str | None) -> str:
    if data is None:
        return ""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return text[-OUTPUT_TAIL_CHARS:].strip()


def _ms(started: float) -> int:
    import time

    return int((time.monotonic() - started) * 1000)
