"""Long lines read without a page fault per page of each.

A request log whose lines are whole conversations (each repeating the last and adding to it) gives
the reader ever longer lines: each line's bytes, and its text once decoded, is a block of its own.
glibc's malloc serves a block above its mmap threshold (128 KB at start) from fresh pages, and on
freeing one raises the threshold to that block's size, so a block no longer than an earlier one comes
from the heap, whose freed space is used again. Lines that only grow are each larger than any freed
before: every line was fresh pages, two faults per 4 KB read (the 110 MB log of
bench/jsonl_throughput.py: 55 K faults, ~0.1 s of its ~0.4 s). Freeing one block of `LARGEST` first
sets the threshold once; lines up to that size then reuse the heap. glibc keeps up to twice that of
freed heap before returning it to the system (its trim threshold follows), a bound, not a cost.
Elsewhere (another libc, macOS) it is one allocation freed at once.
"""
from __future__ import annotations

#: The block freed: lines up to this size come from the heap (glibc moves its threshold up to 32 MB).
LARGEST = 16 << 20
#: Files smaller than this are read as they are (their lines cannot be long enough to matter).
FROM_SIZE = 8 << 20

_done = False


def reuse_for_long_lines(size: int) -> None:
    """Before reading a file of `size` bytes whose lines may be long: once per process."""
    global _done
    if _done or size < FROM_SIZE:
        return
    _done = True
    # bytes(n) asks for zeroed memory: fresh pages come zeroed, so none is touched; freed at once.
    bytes(LARGEST)
