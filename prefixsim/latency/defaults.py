"""Default latency models by model family, from published figures with their sources.

Anthropic published four times to first token with and without prompt caching (Claude 3.5 Sonnet);
the least-squares fit of ttft = overhead + a*uncached + b*cached to them is the default of every
Claude model. OpenAI and Google publish no absolute figures (OpenAI only relative ones), so their
defaults are Anthropic's, marked derived: a `replay --latency` fit of your own traffic replaces
them (docs/rules.md#latency; tests/latency/test_defaults.py re-derives the figures)."""
from __future__ import annotations

from dataclasses import dataclass

from prefixsim.latency.model import LatencyModel
from prefixsim.providers.registry import family_provider

ANTHROPIC_LAUNCH = ("Anthropic, 'Prompt caching with Claude' (2024-08-14, anthropic.com/news/prompt-caching), "
                    "Claude 3.5 Sonnet")
OPENAI_RELATIVE = ("OpenAI publishes only relative figures: 'reduce latency by up to 80%' (platform.openai.com/docs/"
                   "guides/prompt-caching) and 67 % lower time to first token at 150K+ tokens, 7 % at 1,024 "
                   "(openai-cookbook, Prompt_Caching_201.ipynb)")
GOOGLE_NONE = "Google publishes no latency figure for Gemini's implicit or explicit caching (ai.google.dev/gemini-api/docs/caching)"


@dataclass(frozen=True, slots=True)
class Published:
    """One published time to first token: a prompt of `uncached` + `cached` tokens took `seconds`."""

    case: str
    uncached: int
    cached: int
    seconds: float
    source: str = ANTHROPIC_LAUNCH


#: The launch post's table. Its third case (a 10-turn conversation with a long system prompt,
#: ~10 s -> ~2.5 s) gives no token count, so it checks the fit (docs/rules.md#latency) but is not in it;
#: the cached cases' few uncached tokens (the question) are not given either, taken as 0.
PUBLISHED = (
    Published("chat with a book, 100K-token prompt, uncached", 100_000, 0, 11.5),
    Published("chat with a book, 100K-token prompt, cached", 0, 100_000, 2.4),
    Published("many-shot prompting, 10K-token prompt, uncached", 10_000, 0, 1.6),
    Published("many-shot prompting, 10K-token prompt, cached", 0, 10_000, 1.1),
)

#: The least-squares fit of PUBLISHED (residuals +-0.2 s), to three significant figures.
ANTHROPIC = LatencyModel(0.728, 0.108, 0.0169,
                         source=f"least squares on the 4 published times of {ANTHROPIC_LAUNCH}")
DERIVED = {
    "openai": f"derived: Anthropic's default ({OPENAI_RELATIVE})",
    "gemini": f"derived: Anthropic's default ({GOOGLE_NONE})",
    "deepseek": "derived: Anthropic's default (DeepSeek publishes no latency figure for its disk cache)",
    "other": "derived: Anthropic's default (no published figure for this model family)",
}


def default_for(model: str) -> LatencyModel:
    """The default latency model of `model`'s family: Anthropic's published fit, or it derived."""
    family = family_provider(model)
    if family == "anthropic":
        return ANTHROPIC
    return LatencyModel(ANTHROPIC.overhead_s, ANTHROPIC.uncached_s_per_1k, ANTHROPIC.cached_s_per_1k,
                        source=DERIVED.get(family, DERIVED["other"]))
