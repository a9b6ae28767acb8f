"""Every miss cause of the automatic caches pinned at its boundary (issue 37), in the scenario path
and on replay of a log of the same bodies (tests/cause_paths.py): OpenAI (128-token steps), DeepSeek
(64-token units), Gemini implicit (2.5; Gemini 3's 4,096-token units), every provider of
providers/others.py, and the rules for models the tables do not list (providers/unlisted.py).

The cause and its detail are compared as whole strings. On replay a cause that a rule's figure
decides (below_minimum, ttl_expired, evicted) ends with what of that rule is the stated default or
measured (providers/others.py cause_note), so the replay's expected detail is the scenario's plus
that note.
"""
from __future__ import annotations

from dataclasses import dataclass

import pytest
from cause_paths import Conversation, assistant, both, sized, system, user

from prefixsim.model import Cause
from prefixsim.providers.registry import get_policy

_STATED_TTL = "retention undocumented: stated default"
_STATED_BOTH = "minimum and retention undocumented: stated default"
_UNDOC = "rules undocumented: stated default"
_GEMINI_TTL = ("retention as public traffic shows, 600 s idle; documented: best effort, no hit promised "
               "(docs/rules.md#google-gemini)")
_G3_FLASH_MIN = ("minimum 4096 as public traffic shows (the figures shown); 1024 documented: the documentation "
                 "and the traffic disagree; the *_optimistic figures apply 1024 (docs/rules.md#google-gemini)")


@dataclass(frozen=True)
class Rule:
    """One policy's figures as the printed run applies them, and the notes a replay adds."""

    provider: str
    model: str
    least: int       # the minimum a read needs
    unit: int        # reads rounded down to a multiple of it
    ttl: float       # idle seconds an entry lives
    uri: str = ""
    below_note: str = ""
    ttl_note: str = ""

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}"


RULES = [
    Rule("openai", "gpt-4o-2024-08-06", 1024, 128, 300.0),
    Rule("openai", "gpt-5-mini", 1024, 128, 300.0),
    Rule("deepseek", "deepseek-chat", 64, 64, 3600.0),
    Rule("gemini", "gemini-2.5-pro", 2048, 1, 600.0, below_note="minimum 2048 (docs/rules.md#google-gemini)",
         ttl_note=_GEMINI_TTL),
    Rule("gemini", "gemini-3-pro-preview", 4096, 4096, 600.0,
         below_note="minimum 4096 (docs/rules.md#google-gemini)", ttl_note=_GEMINI_TTL),
    # documented 1,024; what traffic shows (the printed figure) is one 4,096-token unit
    Rule("gemini", "gemini-3-flash-preview", 4096, 4096, 600.0, below_note=_G3_FLASH_MIN, ttl_note=_GEMINI_TTL),
    # Groq documents its retention (2 h without use), not its minimum: only a below_minimum says so
    Rule("groq", "moonshotai/kimi-k2-instruct-0905", 1024, 1, 7200.0, "https://api.groq.com/openai/v1/chat/completions",
         below_note="minimum undocumented: stated default"),
    Rule("zai", "glm-4.6", 1024, 1, 300.0, "https://api.z.ai/api/paas/v4/chat/completions",
         below_note=_STATED_BOTH, ttl_note=_STATED_BOTH),
    Rule("moonshot", "kimi-k2-0905-preview", 1024, 1, 300.0, "https://api.moonshot.ai/v1/chat/completions",
         below_note=_STATED_BOTH, ttl_note=_STATED_BOTH),
    Rule("together", "meta-llama/Llama-3.3-70B-Instruct-Turbo", 1024, 1, 300.0,
         "https://api.together.xyz/v1/chat/completions", below_note=_STATED_BOTH, ttl_note=_STATED_BOTH),
    Rule("fireworks", "accounts/fireworks/models/llama-v3p1-8b-instruct", 1024, 1, 300.0,
         "https://api.fireworks.ai/inference/v1/chat/completions", below_note=_STATED_BOTH, ttl_note=_STATED_BOTH),
    Rule("cohere", "command-a-03-2025", 1024, 1, 300.0, "https://api.cohere.com/compatibility/v1/chat/completions",
         below_note=_UNDOC, ttl_note=_UNDOC),
    Rule("other", "some-model-nobody-knows", 1024, 1, 300.0, below_note=_UNDOC, ttl_note=_UNDOC),
    # models the tables do not list (providers/unlisted.py): an OpenAI id's minimum is OpenAI's general
    # rule (O-OLD), its retention assumed; a Gemini id's minimum assumed, its retention what traffic shows
    Rule("openai", "gpt-4.5-preview", 1024, 128, 300.0,
         ttl_note="model not in OpenAI's tables, its retention undocumented: stated default"),
    Rule("gemini", "gemini-2.0-flash", 1024, 1, 600.0,
         below_note="model not in the Gemini tables, its minimum undocumented: stated default", ttl_note=_GEMINI_TTL),
]
#: No minimum: nothing is ever below it (their own examples read a few tokens).
NO_MINIMUM = [Rule("xai", "grok-4", 0, 1, 300.0, "https://api.x.ai/v1/chat/completions", ttl_note=_STATED_TTL),
              Rule("mistral", "mistral-large-latest", 0, 1, 300.0, "https://api.mistral.ai/v1/chat/completions",
                   ttl_note=_STATED_TTL)]
ALL = RULES + NO_MINIMUM


def conv(r: Rule) -> Conversation:
    return Conversation(r.provider, r.model, r.uri)


def noted(detail: str, note: str) -> str:
    return "; ".join(x for x in (detail, note) if x)


@pytest.mark.parametrize("r", ALL, ids=str)
def test_the_notes_a_replay_adds(r):
    """The expected replay notes above are the policies' own (a rule that changes its source changes them)."""
    from prefixsim.providers.others import cause_note

    policy = get_policy(r.provider, listed_only=False)
    if r.least:
        assert cause_note(policy, r.model, "below_minimum") == r.below_note
    assert cause_note(policy, r.model, "ttl_expired") == r.ttl_note


@pytest.mark.parametrize("r", RULES, ids=str)
def test_one_token_below_the_minimum_is_below_it(r, tmp_path):
    s = system()
    c = conv(r).send(0, s, sized(r.model, r.least - 1, s))
    causes, replayed, outs, _ = both(c, tmp_path)
    assert outs[0].usage.prompt_tokens == r.least - 1
    assert causes == [Cause("below_minimum", f"{r.least - 1} tokens")]
    assert replayed == [Cause("below_minimum", noted(f"{r.least - 1} tokens", r.below_note))]


@pytest.mark.parametrize("r", RULES, ids=str)
def test_exactly_the_minimum_is_cold_then_read_whole(r, tmp_path):
    s = system()
    first = sized(r.model, r.least, s)
    c = conv(r).send(0, s, first).send(60, s, first, assistant("Yes."), user("And then?"))
    causes, replayed, outs, _ = both(c, tmp_path)
    assert [o.usage.cache_read for o in outs] == [0, r.least]
    assert causes == replayed == [Cause("cold"), Cause()]


@pytest.mark.parametrize("r", [x for x in ALL if x.unit > 1], ids=str)
def test_a_read_ends_at_the_providers_unit(r, tmp_path):
    """One token short of the next unit reads the unit below it, whole; the cause is a hit's."""
    s = system()
    for extra, read in ((r.unit - 1, r.least), (r.unit, r.least + r.unit)):
        first = sized(r.model, r.least + extra, s)
        c = conv(r).send(0, s, first).send(60, s, first, assistant("Yes."), user("And then?"))
        causes, replayed, outs, _ = both(c, tmp_path)
        assert [o.usage.cache_read for o in outs] == [0, read], extra
        assert causes == replayed == [Cause("cold"), Cause()]
