"""The rules a replay applies to a model its provider's tables do not list (an id newer or older than
the tables: `gpt-4.5-preview`, `gemini-2.0-flash`, `claude-3-sonnet`). Real traffic is replayed, never
refused, because its model was really served: the provider's own mechanism with the figures that are
not documented for that model stated ("undocumented", which the replay's notes and causes repeat),
the observed usage the truth they are measured against. A scenario's model is one the user typed, so
there a model the tables lack is still refused with a suggestion (`get_policy(listed_only=True)`)."""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Callable

from prefixsim.errors import UserError
from prefixsim.providers.gemini_tables import MEASURED_TTL, OBS
from prefixsim.providers.tables import AutoRule, Measured, Sourced

_SECTION = "docs/rules.md#models-a-providers-tables-do-not-list"

#: A Claude id the minimum table lacks: 1,024 tokens, the minimum of most Claude models (A-PC); the
#: Anthropic mechanism (breakpoints, lookback, TTLs) is the same for every Claude model.
UNLISTED_CLAUDE = Sourced(1024, f"A-PC, {_SECTION}: model not in the Claude tables, its minimum undocumented: "
                                "1,024 assumed, the minimum of most Claude models; breakpoints, lookback and TTLs as on every Claude model")

#: An OpenAI id the tables lack: OpenAI's general rule (automatic from 1,024 tokens in 128-token
#: steps, O-OLD) with the in_memory retention, since extended retention is granted only to the models
#: O-PC lists.
_OPENAI = AutoRule(
    1024, 128, 300.0, 600.0, 3600.0, False,
    f"O-PC, {_SECTION}: model not in OpenAI's tables, its retention undocumented: in_memory assumed (5 min "
    "pessimistic, 10 min optimistic, 1 h cap; extended retention only for the models O-PC lists); cached_tokens "
    "in 128-token steps from 1,024 tokens (O-OLD)")

#: A Gemini id the tables lack (implicit caching is documented for 2.5 and later; 2.0 and 1.5 ids get no
#: row): best effort as on every Gemini model (pessimistic nothing read, optimistic every prefix for
#: 24 h, printed what public Gemini traffic shows), from 1,024 tokens, the smallest documented Gemini minimum.
_GEMINI = AutoRule(
    1024, 1, 0.0, 86400.0, 86400.0, False,
    f"G-CC, {_SECTION}: model not in the Gemini tables, its minimum undocumented: 1,024 assumed, the smallest "
    "documented (implicit caching is documented for 2.5 and later); pessimistic = nothing read, optimistic = "
    "every prefix kept up to 24 h (G-VX); read at block boundaries", partial=False,
    measured=Measured(MEASURED_TTL, 1024, f"{OBS}; minimum: 1,024 assumed (undocumented for this model)"))

#: The same OpenAI id sent with prompt_cache_retention "24h": the request says the model keeps it.
_OPENAI_24H = replace(_OPENAI, ttl=1800.0, ttl_optimistic=86400.0, max_lifetime=86400.0, source=(
    f"O-PC, {_SECTION}: model not in OpenAI's tables, sent with prompt_cache_retention '24h': ~30 min pessimistic, "
    "24 h optimistic and cap; cached_tokens in 128-token steps from 1,024 tokens (O-OLD)"))

UNLISTED_RULES: dict[str, AutoRule] = {"openai": _OPENAI, "gemini": _GEMINI}


def or_unlisted(provider: str, rule_for: Callable[[str, str], AutoRule]) -> Callable[[str, str], AutoRule]:
    """`rule_for` (an automatic cache's lookup) that answers a model its tables lack with the
    provider's rule for unlisted models instead of refusing it."""
    fallback = UNLISTED_RULES[provider]

    @lru_cache(maxsize=512)
    def lookup(model: str, retention: str = "") -> AutoRule:
        try:
            return rule_for(model, retention)
        except UserError:   # the tables' "unknown model": this model was served, so it replays
            return _OPENAI_24H if provider == "openai" and retention == "24h" else fallback

    return lookup
