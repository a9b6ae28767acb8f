"""Model lifecycles as data: when a model id was released, when it became an alias of another (priced
as its successor from then), when it was retired, and what the provider does with a request after
that (routes it to a successor, billed at the successor's rates, or refuses it). Nothing is priced
at an old rate after its model stopped existing, nor before it existed.
docs/rules.md#pricing-the-price-overlay-and-model-lifecycles."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass


def _t(s: str) -> dt.datetime:
    return dt.datetime.fromisoformat(s).replace(tzinfo=dt.UTC)


@dataclass(frozen=True, slots=True)
class Lifecycle:
    model: str
    provider: str
    source: str
    read: str
    released: dt.datetime | None = None
    alias_of: str | None = None          # priced as this model from `alias_from`
    alias_from: dt.datetime | None = None
    retired: dt.datetime | None = None
    successor: str | None = None         # what the provider names instead
    routed: bool = False                 # after `retired`: requests served by `successor` at its rates (else refused)


_DS = "https://api-docs.deepseek.com/quick_start/pricing (DeepSeek V4 release note)"
_GD = ("https://ai.google.dev/gemini-api/docs/deprecations, as quoted by aideprecations.com (dev.to, read "
       "2026-11-10); the page's own copies read list the 2.5 models' release dates")

LIFECYCLES: tuple[Lifecycle, ...] = (
    # DeepSeek V4 (2026-04-24): the legacy names route to V4-Flash (non-thinking / thinking) and "will be
    # fully retired and inaccessible after Jul 24th, 2026, 15:59 (UTC Time)"; a DeepSeek recording in
    # tests/data answers a deepseek-chat-era request with "model": "deepseek-v4-flash".
    Lifecycle("deepseek-chat", "deepseek", _DS, "2026-12-01", alias_of="deepseek-v4-flash",
              alias_from=_t("2026-04-24T00:00:00"), retired=_t("2026-07-24T15:59:00"),
              successor="deepseek-v4-flash"),
    Lifecycle("deepseek-reasoner", "deepseek", _DS, "2026-12-01", alias_of="deepseek-v4-flash",
              alias_from=_t("2026-04-24T00:00:00"), retired=_t("2026-07-24T15:59:00"),
              successor="deepseek-v4-flash"),
    Lifecycle("deepseek-v4-flash", "deepseek", _DS, "2026-12-01", released=_t("2026-04-24T00:00:00")),
    Lifecycle("deepseek-v4-pro", "deepseek", _DS, "2026-12-01", released=_t("2026-04-24T00:00:00")),
    # Gemini API: 2.5 Pro and 2.5 Flash shut down on 2026-12-01; requests to gemini-2.5-pro are routed
    # to gemini-3.8-flash, to gemini-2.5-flash to gemini-3.5-flash-lite, billed at the new model's
    # rates (UNCONFIRMED: a secondary quote of the deprecations page). Released 2025-06-17.
    Lifecycle("gemini-2.5-pro", "gemini", _GD, "2026-12-02", released=_t("2025-06-17T00:00:00"),
              retired=_t("2026-12-01T00:00:00"), successor="gemini-3.8-flash", routed=True),
    Lifecycle("gemini-2.5-flash", "gemini", _GD, "2026-12-02", released=_t("2025-06-17T00:00:00"),
              retired=_t("2026-12-01T00:00:00"), successor="gemini-3.5-flash-lite", routed=True),
    Lifecycle("gemini-3.5-flash", "gemini", _GD, "2026-12-02", released=_t("2026-05-19T00:00:00")),
    Lifecycle("gemini-3.5-flash-lite", "gemini", _GD, "2026-12-02", released=_t("2026-07-21T00:00:00")),
    Lifecycle("gemini-3.6-flash", "gemini", _GD, "2026-12-02", released=_t("2026-07-21T00:00:00")),
    Lifecycle("gemini-3.7-flash", "gemini", _GD, "2026-12-02", released=_t("2026-08-13T00:00:00")),
    Lifecycle("gemini-3.8-flash", "gemini", _GD, "2026-12-02", released=_t("2026-09-02T00:00:00")),
)

_BY_KEY = {(x.model, x.provider): x for x in LIFECYCLES}


def lifecycle(model: str, provider: str | None) -> Lifecycle | None:
    """The lifecycle row of a model id as a provider names it (a router's `deepseek/` prefix dropped)."""
    return _BY_KEY.get((model.strip().lower().rsplit("/", 1)[-1], provider or ""))
