"""What a Claude Code version puts in its prompt, where versions differ and the transcript shows it.

The system prompt names the session's working directory. Up to 2.1.15 at least, a `cd` that stayed
made the next turn's prompt name the new directory (re-rendered: only a static prefix is read):
of the turns started in another directory within 5 minutes of the previous request, 93 of 94 in
`scotthamilton77/claude-code-sidekick` (2.0.x) and all 3 in the other public transcripts (1.0.102,
2.1.15) read less than 90 % of the previous prompt. From 2.1.39 the prompt keeps the launch
("primary") directory: a `cd` inside the project still moves the transcript's `cwd`, and the turns
in another directory of public 2.1.39, 2.1.44 and 2.1.146 sessions read the whole conversation (4 of
4; issue 30; the harness stopped adopting `cd` as the session's directory: anthropics/claude-code#42844).
Between 2.1.16 and 2.1.38 no public transcript shows either, so the replay keeps the earlier
behaviour and says so.
"""
from __future__ import annotations

import re

#: The first version seen keeping the launch directory in its prompt after a `cd`.
KEEPS_LAUNCH_DIRECTORY = (2, 1, 39)
#: The last version seen re-rendering the prompt in the new directory.
RENDERS_NEW_DIRECTORY = (2, 1, 15)


_VERSION = re.compile(r"v?(\d+(?:\.\d+)*)")


def parsed(version: str) -> tuple[int, ...] | None:
    """"2.1.146" -> (2, 1, 146), its numeric core for a pre-release or a build ("2.1.146-beta",
    "v2.2.0-rc.1"); None when it starts with no version number."""
    m = _VERSION.match(version.strip())
    return tuple(int(p) for p in m.group(1).split(".")) if m else None


def prompt_follows_cd(version: str) -> bool:
    """Whether a turn started in another working directory renders the system prompt anew. Unknown
    or unparsed versions, and those between the last seen doing so and the first seen not, keep
    the behaviour seen longest (`uncertain_cd` names that band)."""
    v = parsed(version)
    return v is None or v < KEEPS_LAUNCH_DIRECTORY


def uncertain_cd(version: str) -> bool:
    """A version between the last seen re-rendering after a `cd` and the first seen keeping the
    launch directory: the replay re-renders there, unconfirmed."""
    v = parsed(version)
    return v is not None and RENDERS_NEW_DIRECTORY < v < KEEPS_LAUNCH_DIRECTORY
