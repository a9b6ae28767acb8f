"""What a Claude Code version puts in its prompt, where versions differ and the transcript shows it.

The system prompt names the session's working directory. Up to 2.1.17 at least, a `cd` that stayed
made the next turn's prompt name the new directory (re-rendered: only a static prefix is read):
of the turns started in another directory within 5 minutes of the previous request, 93 of 94 in
`scotthamilton77/claude-code-sidekick` (2.0.x) and all 6 in the other public transcripts (1.0.102,
2.1.15, and 3 of 2.1.17 in entireio/cli, which read 16,143-16,679 tokens, the cross-session prefix,
of 71-132 K) read less than 90 % of the previous prompt. From 2.1.19 the prompt keeps the launch
("primary") directory: a `cd` inside the project still moves the transcript's `cwd`, and the turns
in another directory of public 2.1.19, 2.1.39, 2.1.44 and 2.1.146 sessions read the whole
conversation (6 of 6; issue 30; the harness stopped adopting `cd` as the session's directory:
anthropics/claude-code#42844). 2.1.18 shows neither in any public transcript, so the replay keeps the
earlier behaviour there and says so.

On the models whose API default keeps only the last assistant turn's thinking (providers.tables.
ANTHROPIC_KEEPS_THINKING), a new user turn drops the earlier turns' thinking blocks, so it reads the
previous prompt only up to the first request whose response thought (A-TH). Up to 2.1.17 Claude Code
sent that default: in the public 2.0.22-2.0.28 transcripts (tests/data, Sonnet 4.5) 0 of 12 such turns
read the whole previous prompt; and after a turn that thought 1,000 tokens or more, the new turn's prompt
is shorter than the previous request's (its thinking left out) in 62 of 67 such turns of 2.0.0-2.0.28
and 23 of 25 of 2.0.76-2.1.17 (entireio/cli; issue 30). From 2.1.41 it asks to keep every turn's thinking
(the API's `clear_thinking_20251015` edit with `keep: "all"`, which the API names the setting that
maximizes cache hits: platform.claude.com/docs/en/build-with-claude/context-editing): on Sonnet 4.5 in
`Eduardodmb/ClaudeWork` @7545331a, 94 of 130 such turns of 2.1.41 and 257 of 281 of 2.1.122-2.1.150
read the whole previous prompt, thinking included (the rest read up to the first thinking request or
only the static prefix: an expired cache; issue 30), and 3 of 4 after 1,000 tokens of thinking were not
shorter. Between 2.1.18 and 2.1.40 no public transcript shows either: the replay drops the thinking
there, as the API default does. (Where the turns of 2.0.76-2.1.17 read past the dropped thinking, a
prompt-suggestion request cached the turn as the next one sends it: `suggests_prompts`.)
"""
from __future__ import annotations

import re

#: The first version seen keeping the launch directory in its prompt after a `cd`.
KEEPS_LAUNCH_DIRECTORY = (2, 1, 19)
#: The last version seen re-rendering the prompt in the new directory.
RENDERS_NEW_DIRECTORY = (2, 1, 17)
#: The first version seen keeping earlier turns' thinking blocks on a model that would drop them.
KEEPS_EARLIER_THINKING = (2, 1, 41)
#: The last version seen dropping them (sending the API default).
LAST_DROPPING_THINKING = (2, 1, 17)
#: The first version seen sending a prompt-suggestion request when a turn ends (`suggests_prompts`).
SUGGESTS_PROMPTS_FROM = (2, 0, 74)


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


def drops_earlier_thinking(version: str) -> bool:
    """Whether a new user turn leaves the earlier turns' thinking out of the prompt on a model whose
    API default keeps only the last turn's (an unknown or unparsed version: the API default)."""
    v = parsed(version)
    return v is None or v < KEEPS_EARLIER_THINKING


def uncertain_thinking(version: str) -> bool:
    """A version between the last seen dropping earlier turns' thinking and the first seen keeping it:
    the replay drops it there, as the API default does, unconfirmed."""
    v = parsed(version)
    return v is not None and LAST_DROPPING_THINKING < v < KEEPS_EARLIER_THINKING


def suggests_prompts(version: str) -> bool:
    """Whether a version may send the prompt-suggestion request when a turn ends: after Claude responds,
    Claude Code asks the model for the user's likely next prompt (the grey text in the input, Tab
    accepts it; `promptSuggestionEnabled` turns it off, and a server-side flag decides it too:
    anthropics/claude-code#30991). That request sends the conversation through the reply as the next
    turn will (earlier thinking dropped where the next turn drops it) and caches it; the transcript
    does not log it. In the public transcripts a new user turn within 290 s read past what its logged
    requests cached, into the reply before it, in 845 of 1,433 turns of 2.0.74-2.1.53 (entireio/cli,
    gregszero/ned, 404-NFYet/adelie-investment; Eduardodmb/ClaudeWork's 2.1.41 sessions 6 of 95: the
    setting or flag off), in 41 of 1,218 up to 2.0.29 and 17 of 449 from 2.1.78; none between. Whether
    a session sends it is the user's (calibrate.py: Calibrator._suggests learns it from the session's turns,
    else its project's, else any session's)."""
    v = parsed(version)
    return v is not None and v >= SUGGESTS_PROMPTS_FROM
