"""Cache rules of the providers behind OpenAI-compatible Chat endpoints other than OpenAI, DeepSeek and
Gemini (Groq, Mistral, xAI, z.ai, Moonshot / Kimi, Together, Fireworks, Cohere, any other host), as
data. Each provider's row names its source key (docs/rules.md#source-keys) and the section of
docs/rules.md that states the rule. A figure a provider does not publish takes the stated default of
`STATED_DEFAULT` and says so ("undocumented" in its source, which the replay's notes and causes
repeat): a provider with no published rules replays, with the observed usage as the truth.

Kept apart from `tables.py` (the rules of the providers with a policy of their own) so that each
stays under the house size; `tests/docs/test_docs.py` reads the rows of both."""
from __future__ import annotations

from dataclasses import replace

from prefixsim.providers.auto_text import best_effort
from prefixsim.providers.base import Policy
from prefixsim.providers.tables import AutoRule, Sourced

_SECTION = "docs/rules.md#other-providers-behind-openai-compatible-endpoints"

#: Automatic longest-prefix caching at block boundaries from 1,024 tokens (OpenAI's minimum, which
#: the OpenAI-compatible gateways restate), kept 5 minutes idle at the pessimistic end and an hour at
#: the optimistic end, no write fee: the default for every figure a provider does not publish.
STATED_DEFAULT = AutoRule(
    1024, 1, 300.0, 3600.0, float("inf"), False,
    f"UNDOC, {_SECTION}: rules undocumented; stated default: automatic longest-prefix caching at block "
    "boundaries from 1,024 tokens (OpenAI's minimum, O-PC), 5 min idle pessimistic, 1 h optimistic, no write fee",
    partial=False)


def _stated(min_tokens: int, source: str) -> AutoRule:
    """A provider that publishes some figures only: its minimum and source, the stated default's
    retention, pricing and units otherwise."""
    return replace(STATED_DEFAULT, min_tokens=min_tokens, source=source)


#: Groq: automatic prefix caching on the models it lists, "expires after 2 hours without use",
#: best effort; no minimum published.
_GROQ = AutoRule(
    1024, 1, 7200.0, 7200.0, float("inf"), False,
    f"GQ-PC, {_SECTION}: automatic prefix caching (listed models: Kimi K2, gpt-oss 20B / 120B / safeguard 20B), "
    "'expires after 2 hours without use', best effort, 50 % off cached input; minimum undocumented: 1,024 "
    "(stated default)", partial=False)
#: Mistral: automatic, cached tokens at 10 %; a summary of its page gives 64-token cache blocks, but
#: its own responses read 9 of 10 and 32 of 64 prompt tokens (`usage.num_cached_tokens`), so no block
#: or minimum is applied; retention undocumented.
_MISTRAL = _stated(
    0,
    f"MI-PC, {_SECTION}: automatic prefix caching, prompt_cache_key routes, cached tokens 10 % of input; 64-token "
    "cache blocks in a secondary summary, but OBS: reads of 9 of 10 and 32 of 64 tokens in pydantic-ai's "
    "recordings, so exact counts and no minimum; retention undocumented: 5 min pessimistic, 1 h optimistic "
    "(stated default)")
#: xAI: automatic on every Grok model, entries per server and evictable at any time; the docs' own
#: example reads 98 of 125 tokens, so no minimum is applied.
_XAI = _stated(
    0,
    f"X-PC, {_SECTION}: automatic on all Grok models, per server (x-grok-conv-id / prompt_cache_key route), "
    "'can be evicted at any time'; the usage example reads 98 of 125 tokens, so no minimum; retention "
    "undocumented: 5 min pessimistic, 1 h optimistic (stated default)")
_ZAI = _stated(
    1024,
    f"Z-CC, {_SECTION}: implicit caching on all mainstream GLM models (GLM-4.5 on), cached_tokens in "
    "prompt_tokens_details; minimum and retention undocumented: 1,024 tokens, 5 min pessimistic, 1 h optimistic "
    "(stated default)")
_MOONSHOT = _stated(
    1024,
    f"K-CC, {_SECTION}: Kimi K2 models cache prefixes automatically (cached_tokens in prompt_tokens_details; "
    "moonshot-v1's explicit /v1/caching objects are not modelled); minimum and retention undocumented: 1,024 "
    "tokens, 5 min pessimistic, 1 h optimistic (stated default)")
_TOGETHER = _stated(
    1024,
    f"TG-PC, {_SECTION}: automatic on serverless and dedicated inference, the prefix as the chat template renders "
    "it (tools and template settings included), 'no cache ID or expiry setting'; minimum and retention "
    "undocumented: 1,024 tokens, 5 min pessimistic, 1 h optimistic (stated default)")
_FIREWORKS = _stated(
    1024,
    f"FW-PC, {_SECTION}: enabled by default on all models, exact prefix matches, tools part of the prompt, "
    "cached input 50 % off by default; minimum and retention undocumented: 1,024 tokens, 5 min pessimistic, "
    "1 h optimistic (stated default)")

#: The rule of each provider name (the registry's) by model id prefix ("" = any model of it).
OTHER_RULES: dict[str, dict[str, AutoRule]] = {
    "groq": {"": _GROQ}, "mistral": {"": _MISTRAL}, "xai": {"": _XAI}, "zai": {"": _ZAI},
    "moonshot": {"": _MOONSHOT}, "together": {"": _TOGETHER}, "fireworks": {"": _FIREWORKS},
    "cohere": {"": STATED_DEFAULT}, "other": {"": STATED_DEFAULT},
}
OTHER_PROVIDERS = tuple(OTHER_RULES)

#: Azure OpenAI documents OpenAI's rules for the same models (automatic from 1,024 tokens, in_memory
#: 5-10 minutes idle, extended retention by prompt_cache_retention): its traffic replays as OpenAI's.
AZURE_AS_OPENAI = Sourced("openai", f"AZ-PC, {_SECTION}: Azure OpenAI's prompt caching is OpenAI's (GPT-4o and newer, "
                                    "1,024 tokens, 5-10 min idle and removed within 1 h, prompt_cache_retention)")

#: OpenRouter passes a request to the provider its model id names (`anthropic/…`, `google/…`) or its
#: response names (`provider: "Anthropic"`), with that provider's cache rules: Anthropic's cache_control
#: breakpoints (at most 4, 5 min) sent in the OpenAI-format body, OpenAI's, DeepSeek's, Gemini's and
#: Grok's automatic caching; its usage reports cached_tokens and cache_write_tokens inside prompt_tokens.
OPENROUTER_PASS_THROUGH = Sourced("upstream", f"OR-PC, {_SECTION}: the upstream provider's own caching; "
                                              "cache_control passed to Anthropic (4 breakpoints, 5 min) and Gemini")


def other_rule(provider: str):
    """The rule lookup of one provider (`AutomaticPolicy`'s `rule_for`): the longest matching model
    prefix of its rows, else its own default, else the stated default."""
    rows = OTHER_RULES.get(provider, {})

    def rule_for(model: str, retention: str = "") -> AutoRule:
        m = model.strip().lower()
        best = max((k for k in rows if m.startswith(k) or m.rsplit("/", 1)[-1].startswith(k)), key=len, default=None)
        return rows[best] if best is not None else STATED_DEFAULT

    return rule_for


def undocumented(source: str) -> bool:
    """Whether a rule's source says part of it is the stated default (the replay then says so)."""
    return source.startswith("UNDOC") or "undocumented" in source


#: Causes whose figure a rule decides (its minimum, its retention): where that rule is the stated
#: default, the cause says so.
RULE_CAUSES = ("below_minimum", "ttl_expired", "evicted")


def rules_note(policy: Policy, model: str) -> str:
    """"" when the policy's rules for `model` are documented, else what of them is the stated default:
    a provider of `OTHER_RULES`, a Bedrock model without documented caching, or a model a provider's
    tables do not list (providers/unlisted.py)."""
    part = _undocumented(policy, model)
    return "" if part is None else f"{part or 'rules'} undocumented: stated default"


def _undocumented(policy: Policy, model: str) -> str | None:
    """None when `model`'s rules are documented; else the clause naming what is not ("minimum",
    "minimum and retention"), "" for the whole rule (a source that starts "UNDOC", or names nothing)."""
    described = policy.describe(model)
    source = next((v for k, v in described.items() if k in _SOURCED and undocumented(v)), "")
    if not source:
        return None
    if source.startswith("UNDOC") or "undocumented" not in source:
        return ""
    # the clause naming what is undocumented: after the source key's ": " and a figure's "(" (Bedrock)
    head = source.split("undocumented", 1)[0]
    return head.rsplit(";", 1)[-1].rsplit(": ", 1)[-1].rsplit("(", 1)[-1].strip(" :,")


def cause_note(policy: Policy, model: str, kind: str = "") -> str:
    """What a cause of `kind` decided by `model`'s rule adds: the stated default it used (`rules_note`),
    or that its figure is what public traffic shows, beside the documentation's (a measured rule:
    Gemini's best-effort implicit cache)."""
    part = _undocumented(policy, model)
    # the stated default of another figure decided nothing here
    note = rules_note(policy, model) if part is not None and _concerns(part, kind) else ""
    described = policy.describe(model) if not note else {}
    if note or "measured" not in described:
        return note
    gemini = best_effort(described)   # else a documented range that still reads at its pessimistic end (DeepSeek)
    page = "docs/rules.md#google-gemini" if gemini else f"docs/rules.md#{described.get('provider', '')}"
    if kind == "below_minimum":
        # only where the minimum is a figure traffic shows, or the rule is best effort throughout
        shown = described["minimum cacheable tokens"]
        return f"minimum {shown} ({page})" if gemini or not shown.isdigit() else ""
    ttl = described["retention"].split("the figures shown: ", 1)[-1].split(" idle", 1)[0]
    documented = "best effort, no hit promised" if gemini else "a range (hours to days)"
    return f"retention as public traffic shows, {ttl} idle; documented: {documented} ({page})"


#: The figure of a rule that decides a cause of each kind (RULE_CAUSES): a note that names which
#: figures are the stated default is added only to the causes that figure decides.
_FIGURE = {"below_minimum": "minimum", "ttl_expired": "retention", "evicted": "retention"}


def _concerns(part: str, kind: str) -> bool:
    """Whether the undocumented `part` (`_undocumented`'s) is about the figure that decides a cause of
    `kind`: it names that figure, or no figure at all ("", "caching": the whole rule)."""
    figure = _FIGURE.get(kind)
    return figure is None or figure in part or not any(f in part for f in set(_FIGURE.values()))


#: The fields of a policy's description that carry a rule's source.
_SOURCED = ("source", "minimum cacheable tokens", "platform rules")
