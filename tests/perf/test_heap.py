"""`_perf.heap`: one large block freed before a log of long lines is read, once per process, only for
files large enough to have such lines."""
from __future__ import annotations

from prefixsim._perf import heap


def test_the_block_is_freed_once_and_only_before_a_large_file(monkeypatch):
    made = []
    monkeypatch.setattr(heap, "_done", False)
    monkeypatch.setattr(heap, "bytes", lambda n: made.append(n), raising=False)
    heap.reuse_for_long_lines(heap.FROM_SIZE - 1)   # a small file: nothing
    assert made == []
    heap.reuse_for_long_lines(heap.FROM_SIZE)
    heap.reuse_for_long_lines(10 * heap.FROM_SIZE)   # once per process
    assert made == [heap.LARGEST]
    # glibc raises its threshold only for a freed block of at most 32 MB
    assert heap.LARGEST < 32 << 20
