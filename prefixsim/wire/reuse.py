"""Pieces of a message already rendered, reused: a log of OpenAI-format or Gemini requests sends every
earlier message of its conversation again on every line, and rendering each (JSON-encoding its
content, collecting its texts) cost the whole history per line (issue 35: 18,600 renders for 1,181
distinct messages). The Anthropic path shares blocks by identity with the previous line
(`wire.anthropic.History`); here the conversations of a gateway log interleave, so a message is
known by its content: an exact key of its value (`exact_key`), under which its pieces are kept
once and handed out as copies at the path it has this time. What a recent line sent unchanged
(`sources.linejson` shares it: the same object, also from a conversation's request lines back) is
known by identity, without its key.

The copies matter: a reader changes its pieces (`wire.openai._in_layer_order` raises a system
message's layer), so no two requests ever hold the same Piece object."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Hashable

if TYPE_CHECKING:
    from prefixsim.wire.openai import Piece

#: Bytes of rendered pieces kept per memo before it starts again (the texts and keys they keep alive
#: are about as large): a few sessions of history, small beside a replay's memory budget.
LIMIT = 32 << 20
#: Requests whose values stay known by identity (`sources.linejson.RECENT_LINES`: the lines whose
#: values a line shares).
RECENT = 64


def exact_key(value: Any) -> Hashable:
    """A key equal for two values exactly when they render to the same pieces: same types, same key
    order, same values. `==` is not enough (1 == 1.0 == True and 0.0 == -0.0 encode differently);
    strings, the bulk of a message, are taken as they are (their hash is C's)."""
    t = type(value)
    if t is str:
        return value
    if t is dict:
        return (dict, tuple((k if type(k) is str else exact_key(k), exact_key(v)) for k, v in value.items()))
    if t is list:
        return (list, tuple(map(exact_key, value)))
    if t is float:
        return (float, repr(value))   # -0.0 and 0.0 apart; every NaN one key (they encode alike)
    return (t, value)   # int, bool, None; anything else keys by itself (a type that is not hashable raises)


class PieceMemo:
    """Rendered pieces by (renderer, its other arguments, the value's exact key). One per reader: what
    one log or cassette has rendered."""

    def __init__(self, limit: int = LIMIT) -> None:
        self._seen: dict[Hashable, tuple[tuple[Piece, str], ...]] = {}
        self._held = 0
        self.limit = limit
        self.hits = 0   # renders saved (tests look at it)
        # By identity: the values the last RECENT requests rendered, with the request that last did
        # (each entry holds its value, so no other object takes its id while it is there).
        self._ids: dict[int, tuple[Any, tuple, tuple[tuple[Piece, str], ...], int]] = {}
        self._turn = 0
        self._room = 4096   # entries before the ones older than RECENT requests are dropped

    def turn(self) -> None:
        """A new request begins: the last RECENT requests' values stay known by identity, older ones by
        content."""
        self._turn += 1
        if len(self._ids) > self._room:
            oldest = self._turn - RECENT
            self._ids = {k: v for k, v in self._ids.items() if v[3] >= oldest}
            self._room = max(4096, 2 * len(self._ids))

    def pieces(self, render: Callable[..., list[Piece]], value: Any, path: str, *args: Any) -> list[Piece]:
        """`render(value, path, *args)`, from the memo when the same object, or a value with the same exact
        key, was rendered before: new Piece objects every time, each at `path` plus what the rendering put
        after it."""
        return self._get(render, value, path, args, True)

    def known(self, render: Callable[..., list[Piece]], value: Any, path: str, *args: Any) -> list[Piece]:
        """As `pieces`, from the memo only when the same object was rendered by this request or the one
        before (for values whose exact key costs what rendering does: tool schemas)."""
        return self._get(render, value, path, args, False)

    def _get(self, render: Callable[..., list[Piece]], value: Any, path: str, args: tuple,
             by_content: bool) -> list[Piece]:
        how = (render, args)
        known = self._ids.get(id(value))
        if known is not None and known[0] is value and known[1] == how:
            got = known[2]
            self.hits += 1
        else:
            key = None
            if by_content:
                try:
                    key = (render, args, exact_key(value))
                    hit = self._seen.get(key)
                except (TypeError, RecursionError):   # not a JSON value (unhashable, a self-containing list)
                    return render(value, path, *args)
            if key is not None and hit is not None:
                got = hit
                self.hits += 1
            else:
                made = render(value, path, *args)
                if not all(p.path.startswith(path) for p in made):
                    return made
                got = tuple((p, p.path[len(path):]) for p in made)
                if key is not None:
                    if self._held > self.limit:
                        self._seen.clear()
                        self._held = 0
                    self._seen[key] = got
                    self._held += sum(len(p.data) for p in made)
        self._ids[id(value)] = (value, how, got, self._turn)
        return [p.moved(path + rest) for p, rest in got]
