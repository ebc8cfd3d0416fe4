"""The forked reader (core/parallel.py, issue 17): every item read exactly once with its own value, whatever the
child does; no child is ever left behind, however far the caller takes the pairs; and the fork happens at the
call, so the caller's own work runs beside the child's."""

from __future__ import annotations

import os
import time

import pytest

from git_memzoi.core import parallel


@pytest.fixture(autouse=True)
def two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "MIN_FILES", 2)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)


def _no_children() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_read_all_keeps_the_order_and_the_values(monkeypatch: pytest.MonkeyPatch) -> None:
    items = list(range(2 * parallel.FRAME_ITEMS + 101))  # the child's part comes in three frames
    pairs = list(parallel.read_all(items, lambda n: n * n))
    assert sorted(pairs) == [(n, n * n) for n in items]  # each index exactly once, with its own value


def test_a_failing_child_leaves_its_half_to_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    parent = os.getpid()

    def read(n: int) -> int:
        if os.getpid() != parent:
            raise RuntimeError("the child breaks")  # it exits non-zero; the parent reads the half again
        return n + 1

    assert sorted(parallel.read_all(list(range(10)), read)) == [(n, n + 1) for n in range(10)]


def test_a_child_that_dies_mid_stream_leaves_the_rest_to_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "MIN_FILES", 2)
    monkeypatch.setattr(parallel, "FRAME_ITEMS", 10)
    monkeypatch.setattr(parallel, "OWN_PERCENT", 45)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    parent = os.getpid()

    def read(n: int) -> int:
        if os.getpid() != parent and n >= 80:  # the child reads 45.. in tens: three frames sent, then it breaks
            raise RuntimeError("the child breaks")
        return -n if os.getpid() != parent else n

    pairs = sorted(parallel.read_all(list(range(100)), read))
    assert [n for n, _ in pairs] == list(range(100))
    child = [n for n, value in pairs if value < 0]
    assert child == list(range(45, 75))  # the child's whole frames kept; 75.. read by this process


def test_a_caller_stopping_early_leaves_no_child_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    pids, fork = [], os.fork
    monkeypatch.setattr(os, "fork", lambda: pids.append(pid := fork()) or pid)
    stream = parallel.read_all(list(range(5000)), lambda n: "x" * 200)
    next(stream)
    stream.close()
    with pytest.raises(ChildProcessError):  # reaped already by read_all
        os.waitpid(pids[0], os.WNOHANG)


def test_a_reading_never_iterated_reaps_its_child_on_exit() -> None:
    with parallel.read_all(list(range(5000)), lambda n: "x" * 200):
        pass  # the caller failed before taking a pair
    assert _no_children()


def test_the_child_reads_while_the_caller_works_before_taking_the_pairs() -> None:
    parent = os.getpid()
    stamps: dict[str, float] = {}

    def read(n: int) -> float:
        return time.monotonic() if os.getpid() != parent else 0.0

    with parallel.read_all(list(range(10)), read, own_percent=0) as pairs:
        stamps["before"] = time.monotonic()
        time.sleep(0.2)  # the caller's own work
        results = sorted(pairs)
    assert [n for n, _ in results] == list(range(10))
    assert all(0 < value < stamps["before"] + 0.2 for _, value in results)  # read by the child, during the sleep
    assert _no_children()


def test_min_items_decides_the_fork() -> None:
    forks: list[int] = []
    fork = os.fork
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "fork", lambda: forks.append(1) or fork())
        assert sorted(parallel.read_all(list(range(5)), str, min_items=6)) == [(n, str(n)) for n in range(5)]
        assert forks == []
        assert sorted(parallel.read_all(list(range(6)), str, min_items=6)) == [(n, str(n)) for n in range(6)]
        assert forks == [1]
