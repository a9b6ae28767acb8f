"""Which provider's rules a break-even study is written for, the provider a model id names
(providers/registry.py: family_provider, which scenarios and replay use too), and the one line that
says why a study does not run for a model of another provider (issue 34 item 8: every study refused a
non-Claude model as "unknown Anthropic model").

Each closed form is the cost rule of one provider (analysis/*.py, checked against that provider's
policy through the runner): five are Anthropic's (cache_control breakpoints and their 20-block
lookback, writes at 1.25x or 2x input readable after the first token, layered invalidation, the
per-model minimum) and gemini-explicit is Gemini's CachedContent. An automatic cache (OpenAI,
DeepSeek, Gemini's implicit one) reads the longest cached prefix with no breakpoint to place, so a
study whose question is a breakpoint's TTL has no counterpart there, and the others would need a
closed form of their own; until one exists and is checked, the study says so rather than price
another provider's traffic under Anthropic's rules."""
from __future__ import annotations

from prefixsim.errors import UserError
from prefixsim.io.suggest import nearest
from prefixsim.providers.registry import family_provider, get_policy, model_provider
from prefixsim.providers.tables import ANTHROPIC_MIN_TOKENS, CLAUDE_PLATFORMS, OPENAI_RULES, AutoRule, ClaudePlatform
from prefixsim.scenario.studynames import OTHER_PROVIDER

#: The families a model id is told by (family_provider), as the refusal of an unknown id names them.
FAMILIES = "claude-*, gpt-* / o1 / o3 / o4, gemini-*, deepseek-*"

#: What each Anthropic study's closed form counts that an automatic cache does not have, and where the
#: same question is answered under the model's own rules (a scenario runs under the provider its
#: model names, scenario/checks.py: provider_of_model).
_ANTHROPIC_ONLY = {
    "fork-vs-subagent": ("its closed form counts cache_control breakpoints, their 20-block lookback and the "
                         "write premium", "compare a fork and sub-agents as a scenario with model: {model} "
                         "(`prefixsim run`), which runs {provider}'s rules"),
    "stagger": ("its closed form counts the siblings' cache_control writes and the premium each pays",
                "a scenario's fork or subagent step with stagger: under model: {model} runs {provider}'s rules"),
    "invalidation": ("its closed form counts Anthropic's layered invalidation (tool_choice keeps the tools and "
                     "system cached) and the write premium",
                     "a scenario's edit steps under model: {model} run {provider}'s rules"),
    "minimum": ("its closed form counts a cache_control breakpoint on the prefix and Anthropic's per-model "
                "minimum", "a scenario under model: {model} shows {provider}'s below_minimum misses"),
    "api-vs-selfhosted": ("its API side counts cache_control breakpoints on the system prompt and the last message "
                          "and the write premium", "a scenario under model: {model} prices the design on {provider}'s "
                          "rules; the GPU side is the same for any API"),
}


def _automatic(provider: str, model: str, rule: AutoRule) -> str:
    """How an automatic cache treats a model, from its rule: what the study would have to count."""
    premium = "writes at a premium only at its own breakpoints" if rule.write_multiplier_applies \
        else "no write premium"
    step = f" in {rule.increment:,}-token steps" if rule.increment > 1 else ""
    return (f"{provider} caches {model}'s prompts automatically (the longest cached prefix{step} from "
            f"{rule.min_tokens:,} tokens, {premium}, kept for as long as {provider} decides)")


def _on_cloud(study: str, model: str, platform: ClaudePlatform) -> str:
    """A Claude model on Bedrock or Vertex AI: the platform, unless its rules for the model differ
    from what the study's closed form counts (the check against the runner would fail): Bedrock's
    spaced checkpoints on Claude 3.x, a platform without the 1h TTL the ttl study weighs."""
    where = "Bedrock" if platform.name == "bedrock" else "Vertex AI"
    if platform.spaces(model):
        raise UserError(f"breakeven {study} does not apply to {model}: {where} asks each of its checkpoints for "
                        f"the model's minimum past the previous one, which the study's closed form does not count; "
                        f"a scenario with model: {model} runs {where}'s rules")
    if study == "ttl" and not platform.offers_1h(model):
        raise UserError(f"breakeven ttl does not apply to {model}: {where} writes it only with the 5m TTL "
                        f"(a 1h breakpoint is billed as 5m), so there is no TTL to choose")
    return platform.name


def study_provider(study: str, model: str) -> str:
    """The provider whose rules and prices `study` runs under for `model`: the one the model's id
    names (registry.model_provider: `anthropic.claude-…-v1:0` is Claude on Bedrock, priced by AWS,
    `claude-…@YYYYMMDD` Claude on Vertex AI). A model of another provider than the study's, or an id
    no family names, is refused in one line (UserError) saying why."""
    wanted = OTHER_PROVIDER.get(study, "anthropic")
    family = model_provider(model)   # as replay and a scenario infer it from the id (a Bedrock id: bedrock)
    if family == wanted:
        return wanted
    if family in ("bedrock", "vertex"):   # Bedrock or Vertex AI: Claude there keeps Anthropic's rules, on its own
        maker = family_provider(model)   # tables (minimum, 1h TTL) and at that cloud's prices
        if wanted == "anthropic" and maker == "anthropic":
            return _on_cloud(study, model, CLAUDE_PLATFORMS[family])
        if maker != "anthropic":   # Amazon Nova and the rest of Bedrock's own models
            raise UserError(f"breakeven {study} does not apply to {model}: it models "
                            f"{'Gemini' if wanted == 'gemini' else 'Anthropic'}'s cache rules, and {model} is "
                            f"{family}'s own model, with its own checkpoint rules (a scenario with model: {model} "
                            f"runs them)")
    if family == "other":
        known = [*ANTHROPIC_MIN_TOKENS, *OPENAI_RULES, "deepseek-chat", "deepseek-reasoner"]
        near = nearest(model, known)
        hint = f"did you mean {near!r}? " if near else ""
        raise UserError(f"unknown model {model!r}: its id names no provider's family ({hint}the studies know "
                        f"{FAMILIES}), so no cache rules or prices apply to it")
    if wanted == "gemini":   # gemini-explicit for a Claude, OpenAI or DeepSeek model
        raise UserError(f"breakeven {study} does not apply to {model}: it prices Gemini's explicit cache "
                        f"(CachedContent, storage per MTok-hour), and {model} is {family}'s, which has none"
                        + ("; the other studies model Anthropic's rules" if family == "anthropic" else ""))
    try:   # a misspelt id of a known family is named as such (unknown OpenAI model ..., known families ...)
        rule = get_policy(family).rule_of(model)   # type: ignore[attr-defined]
    except UserError as e:
        raise UserError(e.message) from None
    how = _automatic(family, model, rule)
    if study == "ttl":
        alt = "; Gemini's choice of how long to keep a cache is the explicit cache's TTL: `prefixsim breakeven " \
              "gemini-explicit`" if family == "gemini" else ""
        raise UserError(f"breakeven ttl does not apply to {model}: it weighs Anthropic's 5m against 1h cache "
                        f"writes (1.25x and 2x input), and {how}: there is no TTL to choose{alt}")
    counts, where = _ANTHROPIC_ONLY[study]
    raise UserError(f"breakeven {study} models Anthropic's rules, not {family}'s: {counts}, and {how}; "
                    + where.format(model=model, provider=family))


def not_applying(studies, model: str) -> dict[str, str]:
    """Of `studies`, those that do not run for `model`, each with the one line saying why
    (study_provider's): the report runs the rest and says these on its page, rather than ask for a
    Claude model whatever the studies are. An id no family names is refused (UserError)."""
    out = {}
    for name in studies:
        try:
            study_provider(name, model)
        except UserError as e:
            if model_provider(model) == "other":
                raise
            out[name] = e.message
    return out

