"""Model ids as the rule tables key them: every spelling a provider, a cloud or a log uses for one
Claude model maps to one id (`claude-sonnet-4-5`); other ids pass through lowercased."""
from __future__ import annotations

import re
from functools import lru_cache

_DATE = re.compile(r"-(\d{8})$")
_OLD_STYLE = re.compile(r"^claude-(\d)(?:-(\d))?-(opus|sonnet|haiku)(.*)$")


def canonical_model(model: str) -> str:
    """`claude-sonnet-4-5-20250929`, `anthropic/claude-3-5-haiku-latest`, `us.anthropic.claude-…-v1:0`
    -> the id our tables use (`claude-sonnet-4-5`, `claude-haiku-3-5`, …). Other ids pass through lowercased."""
    return _canonical(model)


# A log names a handful of models over and over (three lookups per request): the six rewrites below
# were 8.5 % of a large transcript folder's replay (issue 35); ids are few, so the memo stays small.
# The memo sits on this pure helper so the public function keeps its signature (and its type for mypy),
# and bench/canonical_model.py can time the replay with the rewrites unmemoized (`__wrapped__`).
@lru_cache(maxsize=4096)
def _canonical(model: str) -> str:
    m = model.strip().lower()
    m = m.rsplit("/", 1)[-1]
    # Bedrock: base ids `anthropic.…`, inference profiles `us.`/`eu.`/`apac.`/`us-gov.`/`global.anthropic.…`,
    # genai-prices' `regional.anthropic.…`; Vertex: `claude-sonnet-4-5@20250929`, `claude-3-5-sonnet-v2@20241022`
    m = re.sub(r"^(?:[a-z-]+\.)?anthropic\.", "", m)
    m = re.sub(r"(?:-v\d+)?@\d{8}$", "", m)
    m = re.sub(r"-v\d+(?::\d+)?$", "", m)
    m = re.sub(r"-latest$", "", m)
    m = _DATE.sub("", m)
    if m.startswith("claude-"):   # a router's spelling: `anthropic/claude-sonnet-4.6`, `claude-3.5-haiku`
        m = m.replace(".", "-")
    old = _OLD_STYLE.match(m)
    if old:
        major, minor, family, rest = old.groups()
        m = f"claude-{family}-{major}" + (f"-{minor}" if minor else "") + rest
    m = re.sub(r"^(claude-(?:opus|sonnet|haiku)-4)-0$", r"\1", m)
    return m
