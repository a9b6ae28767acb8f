"""Claude on Bedrock and Vertex AI: the model is in the request's URL, not its body."""
from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from prefixsim.providers.tables import canonical_model

#: Cloud endpoints that carry the model in the URL, not the body (the body has `anthropic_version`):
#: Bedrock `/model/{modelId}/invoke` and `/invoke-with-response-stream`; Vertex AI
#: `.../publishers/anthropic/models/{model}:rawPredict` and `:streamRawPredict`.
_CLOUD_URLS = (("bedrock", re.compile(r"/model/([^/?#]+)/invoke(?:-with-response-stream)?(?:[?#/]|$)")),
               ("vertex", re.compile(r"/publishers/anthropic/models/([^/?#:]+):(?:stream)?[rR]awPredict(?:[?#]|$)")))


def cloud_model(url: object) -> tuple[str, str] | None:
    """(platform, model id) of a Bedrock or Vertex AI Messages URL; None for any other URL."""
    if not isinstance(url, str):
        return None
    for platform, pattern in _CLOUD_URLS:
        m = pattern.search(url)
        if m:
            return platform, unquote(m.group(1))
    return None


def with_url_model(body: Any, url: object) -> Any:
    """A Bedrock / Vertex body (`anthropic_version`, messages, no `model`) with the model its URL
    names, mapped to the Anthropic id our tables and prices use (`us.anthropic.claude-sonnet-4-5-
    20250929-v1:0`, `claude-sonnet-4-5@20250929` -> `claude-sonnet-4-5`); any other body as it is."""
    if not (isinstance(body, dict) and "model" not in body and "anthropic_version" in body
            and isinstance(body.get("messages"), list)):
        return body
    found = cloud_model(url)
    return body if found is None else {**body, "model": canonical_model(found[1])}
