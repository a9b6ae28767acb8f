"""Google Gemini's caching rules as data: implicit caching per model family, explicit caches'
storage prices, default TTL and minimum size. Every row names its source key and the section of
docs/rules.md that states the rule (G-CC, G-VX, G-PR, G-ERR: docs/rules.md#source-keys)."""
from __future__ import annotations

from prefixsim.errors import UserError
from prefixsim.providers.tables import AutoRule, Measured, Sourced

# --- Google Gemini implicit caching -----------------------------------------------------------

# G-CC = ai.google.dev/gemini-api/docs/caching, stored copy "Last updated 2026-10-13 UTC" (read
# 2026-11-30); the older interactions/caching copy of 2026-05-07 gave other minimums (2.5 Flash
# 1,024, 2.5 Pro 4,096, 3 Pro Preview 4,096, 3 Flash Preview 1,024). G-VX = Google Cloud "Context
# cache overview" (Vertex AI / Gemini Enterprise Agent Platform, read 2026-11-30): implicit prefixes
# "expire within 24 hours" of creation, most sooner; cached tokens 90 % off; no storage fee.
#
# The documented range of a best-effort cache runs from nothing read to every prefix kept 24 h; the
# printed figure is what public traffic shows (OBS, docs/rules.md#google-gemini, measured with
# bench/gemini_implicit.py): 50 Gemini CLI sessions (BrianV1981/aim: 3 Flash Preview, 3.1 Pro
# Preview; yoavf/ai-sessions: 2.5 Pro) and pydantic-ai's gemini-2.5-flash recordings.
MEASURED_TTL = 600.0
#: Follow-ups within those 10 minutes that read nothing, of all (3 Flash 86 of 2,262, 3.1 Pro 29 of 426,
#: 2.5 Pro 1 of 12): more often early in a session and after a miss, but no field a session records
#: tells them apart (issue 30: naive, repeating a previous miss, is then exact where prefixsim is not).
MEASURED_UNREAD = (116, 2700)
OBS = ("OBS, docs/rules.md#google-gemini (50 public Gemini CLI sessions, pydantic-ai recordings; "
        "bench/gemini_implicit.py): the next request of a conversation read its prefix in 2,584 of 2,700 cases "
        "within 10 min of the previous one, 9 of 20 after 10-60 min, 0 of 1 after an hour (the documentation: "
        "best effort, no hit promised, prefixes kept up to 24 h); its reply is not read back (past the previous "
        "prompt's end in 54 of 2,594 reads)")
#: Gemini 3's kept prefixes end at whole 4,096-token units of the model's own context (which also holds
#: the earlier turns' thinking the API reads back from thought signatures): cachedContentTokenCount is
#: the kept part's pro-rata share of the billed prompt, as cacheTokensDetails is by modality.
_G3_UNIT = ("reads in whole 4,096-token units: a read stays on one level for several requests (1,859 repeats; "
            "median difference 173 tokens as reported on 3 Flash, 26 counted with the earlier turns' thinking) "
            "and jumps by a median 3,673 (3 Flash) / 4,751 (3.1 Pro), ending a median 1,397 / 2,553 tokens "
            "before the previous prompt's end, at no message boundary; counted with that thinking the reads "
            "gather modulo 4,096 (concentration 0.39 on 3.1 Pro, 0.11 on 3 Flash; 1,024 and 2,048 units show "
            "none), so the printed read is the kept prefix rounded down to 4,096 (the reported counts are "
            "shares of the billed prompt, never multiples)")


def _gemini(minimum: int, note: str, seen_below: str = "", measured_min: int | None = None,
            traffic: str = "", unit: int = 1) -> AutoRule:
    """`seen_below`: where traffic shows reads below the documented minimum (the optimistic end and the
    printed figure then apply none). `measured_min`: the minimum traffic shows where it is not the
    documented one, `traffic` what shows it; `unit`: the printed read rounded down to a multiple of it."""
    shown = measured_min if measured_min is not None else (0 if seen_below else minimum)
    evidence = "; ".join(x for x in (OBS, _G3_UNIT if unit > 1 else "", f"minimum: {traffic}" if traffic else "",
                                     seen_below) if x)
    return AutoRule(
        minimum, 1, 0.0, 86400.0, 86400.0, False,
        f"G-CC, docs/rules.md#google-gemini: implicit caching on 2.5 and later, automatic and best effort "
        f"('no guarantee' of a hit): pessimistic = nothing read, optimistic = every prefix kept up to 24 h "
        f"from its write (G-VX); min {minimum:,} tokens ({note}); writes cost plain input; read at block "
        f"boundaries" + (f"; OBS: {seen_below}, so the optimistic end applies no minimum" if seen_below else ""),
        partial=False, min_tokens_optimistic=0 if seen_below else None,
        measured=Measured(MEASURED_TTL, shown, evidence, increment=unit, unread=MEASURED_UNREAD))


#: gemini-2.5-flash's reads below its documented minimum (issue 30: 10 of 11 public recordings).
_G25_FLASH_BELOW = ("reads below the minimum: a 594-token read of an 859-token prompt (tests/data/gemini-api "
                    "`test_google_validated_accepts_what_auto_accepts[validated].yaml`)")
#: 3 Flash Preview's documented 1,024 against its traffic: nothing read after a prompt under 4,000 tokens.
_G3_FLASH_TRAFFIC = ("4,096 as traffic shows, 1,024 documented: in 49 sessions of BrianV1981/aim no request read "
                     "after a prompt of 1,024-3,923 tokens (1 of 53 within 10 min, after 4,022), 27 of 43 after "
                     "4,096-8,192; one 4,096-token unit is the smallest prefix kept")
#: The Gemini 3 generation's unit, measured on 3 Flash and 3.1 Pro Preview, taken for the families without
#: traffic (their documented minimum is that unit).
_G3 = 4096


_G25 = "G-CC 2026-10-13; the 2026-05-07 copy says 1,024 for 2.5 Flash and 4,096 for 2.5 Pro"
#: Longest matching prefix of the model id wins (gemini-2.5-flash covers -lite and dated previews).
GEMINI_RULES: dict[str, AutoRule] = {
    "gemini-2.5-flash": _gemini(2048, _G25, _G25_FLASH_BELOW),
    # Flash-Lite: no traffic shows it reading below its minimum (the longest prefix would give it Flash's)
    "gemini-2.5-flash-lite": _gemini(2048, _G25), "gemini-2.5-pro": _gemini(2048, _G25),
    "gemini-3-flash": _gemini(1024, "G-CC 2026-05-07 only: Gemini 3 Flash Preview", measured_min=4096,
                              traffic=_G3_FLASH_TRAFFIC, unit=_G3),
    "gemini-3-pro": _gemini(4096, "G-CC 2026-05-07: Gemini 3 Pro Preview", unit=_G3),
    "gemini-3.1": _gemini(4096, "G-CC 2026-10-13: Gemini 3.1 Pro Preview", unit=_G3),
    **{f"gemini-3.{v}": _gemini(4096, "G-CC 2026-10-13: Gemini 3.5-3.8 Flash", unit=_G3) for v in (5, 6, 7, 8)},
    "gemini-4": _gemini(4096, "G-CC 2026-10-13: Gemini 4 Argon", unit=_G3),
}


def gemini_rule(model: str, retention: str = "") -> AutoRule:
    """The implicit-caching rule of a Gemini model (2.5 and later; earlier models have none)."""
    m = model.strip().lower().rsplit("/", 1)[-1]
    best = max((k for k in GEMINI_RULES if m.startswith(k)), key=len, default=None)
    if best is None:
        raise UserError(f"unknown Gemini model {model!r} for implicit caching (2.5 and later; known families: "
                        f"{', '.join(sorted(GEMINI_RULES))})")
    return GEMINI_RULES[best]


#: Explicit context caching (`CachedContent`) storage, USD per MTok per hour kept (genai-prices has
#: none). G-PR = ai.google.dev/gemini-api/docs/pricing, stored copies read 2026-11-30 ("Context
#: caching price ... storage price"): 2.5 Pro $4.50, 2.5 Flash $1.00 per 1,000,000 tokens per hour.
#: Gemini 3.1 Pro Preview $4.50 and 3 Flash Preview $1.00 from secondary copies of the same page (read
#: 2026-12-02: the page's 3.1 Pro row quoted verbatim, "$0.20, prompts <= 200k tokens $0.40, prompts >
#: 200k $4.50 / 1,000,000 tokens per hour (storage price)", and adk-gemini 2.1.0's price table); the
#: 3.5-3.8 Flash models have none published. A price sheet's `storage_mtok_hour` overrides it
#: (prefixsim/analysis/gemini_explicit.py).
_G3_PR = "G-PR (secondary copies read 2026-12-02), docs/rules.md#gemini-explicit-context-caching"
GEMINI_STORAGE_MTOK_HOUR: dict[str, Sourced] = {
    "gemini-2.5-pro": Sourced("4.50", "G-PR 2026-11-30, docs/rules.md#gemini-explicit-context-caching"),
    "gemini-2.5-flash": Sourced("1.00", "G-PR 2026-11-30, docs/rules.md#gemini-explicit-context-caching"),
    "gemini-3.1-pro": Sourced("4.50", _G3_PR),
    "gemini-3-flash": Sourced("1.00", _G3_PR),
}
#: The models `breakeven gemini-explicit` defaults to, in order: on a price date the first one live then
#: (released, not retired: prefixsim/core/lifecycle.py) is the default, so the default never becomes a
#: retired model routed to a successor without a storage price. gemini-2.5-pro until its shutdown
#: (2026-12-01), then gemini-3.1-pro-preview, the Pro model live after it with a storage price.
EXPLICIT_STUDY_MODELS: tuple[str, ...] = ("gemini-2.5-pro", "gemini-3.1-pro-preview")
#: Explicit caches live 1 hour unless created with another TTL (G-CC "Explicit caching").
GEMINI_EXPLICIT_DEFAULT_TTL = Sourced(3600.0, "G-CC, docs/rules.md#gemini-explicit-context-caching: TTL defaults to 1 hour")

#: The smallest CachedContent the API creates (below it: 400 INVALID_ARGUMENT "Cached content is too
#: small. total_token_count=N, min_total_token_count=M"). G-CC's table ("minimum input token count
#: for context caching") where the API is not reported to enforce another figure; 2.5 Flash and
#: Flash-Lite as the API's own 400s state them (BerriAI/litellm#17696, 2025-12-09: 2.5 Flash 1,024;
#: discuss.ai.google.dev t/178942: Flash 1,024, Flash-Lite 2,048), below G-CC 2026-10-13's 2,048 for Flash.
_GX = "docs/rules.md#gemini-explicit-context-caching"
GEMINI_EXPLICIT_MINIMUM: dict[str, Sourced] = {
    # the table's rows first, so the API's own figures below replace theirs (value and source)
    **{k: Sourced(r.min_tokens, f"G-CC 2026-10-13 / 2026-05-07 table, {_GX}") for k, r in GEMINI_RULES.items()},
    "gemini-2.5-flash": Sourced(1024, f"G-ERR (litellm#17696, 2025-12-09), {_GX}"),
    "gemini-2.5-flash-lite": Sourced(2048, f"G-ERR (discuss.ai.google.dev t/178942), {_GX}"),
}


def gemini_explicit_minimum(model: str) -> Sourced:
    """The smallest explicit cache (tokens) the API creates for a Gemini model (longest prefix wins)."""
    m = model.strip().lower().rsplit("/", 1)[-1]
    best = max((k for k in GEMINI_EXPLICIT_MINIMUM if m.startswith(k)), key=len, default=None)
    if best is None:
        raise UserError(f"unknown Gemini model {model!r} for explicit caching (known families: "
                        f"{', '.join(sorted(GEMINI_EXPLICIT_MINIMUM))})")
    return GEMINI_EXPLICIT_MINIMUM[best]
