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


#: Vertex AI's multi-region locations (the rest are single regions, or `global`).
_VERTEX_MULTI = ("us", "eu")
_LOCATION = re.compile(r"/locations/([^/?#]+)/")


def cloud_endpoint(url: object) -> tuple[str, str] | None:
    """(platform, endpoint) of a Bedrock or Vertex AI Messages URL: Vertex's `locations/global` is the
    global endpoint, `locations/us` / `eu` multi-region, any other location regional; Bedrock's by
    the model id (a `global.` profile, a geography's `us.` / `eu.` ... profile, or an in-region id).
    None for any other URL."""
    found = cloud_model(url)
    if found is None:
        return None
    platform, model = found
    if platform == "vertex":
        loc = _LOCATION.search(str(url))
        where = loc.group(1).lower() if loc else "global"
        return platform, "global" if where == "global" else "multi-region" if where in _VERTEX_MULTI else "regional"
    m = model.strip().lower()
    if m.startswith("global."):
        return platform, "global"
    return platform, "regional" if m.startswith("anthropic.") else "multi-region"
