"""Nearest-name suggestions for everything a user types by name (commands, options, keys, models,
providers, studies): one wording everywhere, so a typo always gets the same kind of help."""
from __future__ import annotations

import difflib
from typing import Iterable


def nearest(name: str, choices: Iterable[str], cutoff: float | None = None) -> str | None:
    """The valid name closest to `name` (case-insensitive), or None when nothing is close. Long names
    share long stems (`claude-...`), so they must be closer to count as a typo of each other."""
    if cutoff is None:
        cutoff = 0.6 if len(str(name)) <= 10 else 0.8
    # A name is never its own suggestion: "no price for 'gpt-4o' (did you mean 'gpt-4o'?)" says
    # nothing; what is missing is then something else, for the caller to say.
    choices = [c for c in choices if c != name]
    by_lower = {c.lower(): c for c in choices}
    starts = [c for low, c in by_lower.items() if low.startswith(str(name).lower())] if name else []
    if len(starts) == 1:   # `fork` for `fork-vs-subagent`: a unique prefix is what was meant
        return starts[0]
    found = difflib.get_close_matches(str(name).lower(), list(by_lower), n=1, cutoff=cutoff)
    return by_lower[found[0]] if found else None


def unknown(kind: str, name: str, choices: Iterable[str], show: int = 12) -> str:
    """"unknown provider 'antropic' (did you mean 'anthropic'? valid: ...)"; a long list of valid
    names is left out when there is a suggestion, and cut to `show` names when there is none."""
    choices = list(choices)
    near = nearest(name, choices)
    if near is not None:
        listed = f" valid: {', '.join(choices)}" if len(choices) <= show else ""
        return f"unknown {kind} {name!r} (did you mean {near!r}?{listed})"
    listed = ", ".join(choices[:show]) + (f", ... ({len(choices)} in all)" if len(choices) > show else "")
    return f"unknown {kind} {name!r} (valid: {listed})"
