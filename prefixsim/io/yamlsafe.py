"""A bound on YAML alias expansion for documents read with a safe loader.

A safe loader builds `&a [*b, *b, ...]` chains as shared references, so loading a 1 KB "billion
laughs" file is cheap; the cost comes later, from whatever walks the document as a tree (rendering a
body to JSON, converting it to plain data): ten levels of ten aliases are 10^10 nodes. A document
whose aliases add more than `MAX_ALIAS_NODES` nodes to the ones it writes out, or that contains
itself, is refused before anything walks it. A document without aliases always passes, whatever
its size (its nodes are bounded by its bytes). The scenario loader caps the same thing at the same
number while converting (prefixsim.scenario.loader.MAX_NODES).
"""
from __future__ import annotations

from typing import Any

from prefixsim.errors import UserError

#: Nodes aliases may add once expanded; past this, a document is an alias bomb.
MAX_ALIAS_NODES = 1_000_000


def expanded_size(doc: Any) -> tuple[int, int] | None:
    """(nodes with aliases expanded, nodes as written) of a loaded document; None if it contains
    itself. Each container is measured once, so this costs the written size, not the expanded one."""
    sizes: dict[int, int] = {}
    written = 0
    open_: set[int] = set()
    stack: list[tuple[Any, bool]] = [(doc, False)]
    while stack:
        node, done = stack.pop()
        if not isinstance(node, (dict, list, tuple, set)):
            continue
        key = id(node)
        children = list(node.keys()) + list(node.values()) if isinstance(node, dict) else list(node)
        if done:
            open_.discard(key)
            sizes[key] = 1 + sum(sizes.get(id(c), 1) for c in children)
            continue
        if key in sizes:
            continue
        if key in open_:
            return None   # `&a [*a]`: a container inside itself expands forever
        open_.add(key)
        written += 1 + len(children)
        stack.append((node, True))
        stack.extend((c, False) for c in children if isinstance(c, (dict, list, tuple, set)))
    return sizes.get(id(doc), 1), max(written, 1)


def check_aliases(doc: Any, path: str, limit: int = MAX_ALIAS_NODES) -> None:
    """UserError (at `path`) when YAML aliases expand `doc` by more than `limit` nodes or make it
    contain itself; say so before any code walks the document."""
    size = expanded_size(doc)
    if size is None:
        raise UserError("a YAML alias refers to a node that contains it (the document would be infinite)", path)
    expanded, written = size
    if expanded - written > limit:
        raise UserError(f"YAML aliases expand this document by {expanded - written:,} values, more than "
                        f"{limit:,} (an alias bomb?); write it out plainly", path)
