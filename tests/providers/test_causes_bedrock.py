"""Bedrock's own rows behind a cause (issue 37): Amazon Nova's minimum of 1,000 per checkpoint, a
model whose caching Bedrock does not document (no minimum, 5m, and the cause says its rule is the
stated default), a Claude id the tables lack; on the replay of Converse logs built here, each
expected string written from the rule (providers/bedrock.py, docs/rules.md#bedrock-amazon-nova)."""
import json

import pytest

from prefixsim.providers.bedrock import (BEDROCK_UNDOCUMENTED, NOVA_MIN_TOKENS, NOVA_TOOLS_CHECKPOINT,
                                         bedrock_min_tokens, documented)
from prefixsim.providers.registry import get_policy
from prefixsim.providers.tables import BEDROCK
from prefixsim.providers.unlisted import UNLISTED_CLAUDE
from prefixsim.replay import replay
from prefixsim.sources import load

NOVA = "us.amazon.nova-lite-v1:0"
LLAMA = "us.meta.llama4-maverick-17b-instruct-v1:0"
UNLISTED = "us.anthropic.claude-sonnet-9-9-v1:0"
A = "messages[0].content[0]"


def _line(model, t, sizes, stream="a"):
    """A Converse request of one user message whose text blocks each end at a cachePoint; its usage
    all written, so a request's one new block is sized exactly (the rest of the total)."""
    content = []
    for k, _ in enumerate(sizes):
        content += [{"text": f"part {k} " + "w " * 40}, {"cachePoint": {"type": "default"}}]
    return {"modelId": model, "timestamp": f"2026-11-02T09:{t // 60:02d}:{t % 60:02d}Z",
            "messages": [{"role": "user", "content": content}], "requestMetadata": {"user": stream},
            "response": {"usage": {"inputTokens": 0, "cacheWriteInputTokens": sum(sizes),
                                   "cacheReadInputTokens": 0, "outputTokens": 3}}}


def _run(tmp_path, *reqs):
    """(t, model, sizes) each: the printed causes and the predicted (read, 5m write, input), the
    blocks first checked to have the sizes given."""
    p = tmp_path / "converse.jsonl"
    p.write_text("".join(json.dumps(_line(m, t, s)) + "\n" for t, m, s in reqs))
    recs = load(p)
    assert [[b.tokens for b in r.call.request.blocks] for r in recs] == [list(s) for _, _, s in reqs]
    rows = replay(recs).rows
    return [str(r.cause) for r in rows], [(r.predicted.cache_read, r.predicted.cache_write_5m, r.predicted.input_tokens)
                                          for r in rows]


@pytest.mark.parametrize("size,cause,written", [(1000, "cold", 1000), (999, "below_minimum (999 tokens)", 0)])
def test_nova_caches_from_1000_tokens(tmp_path, size, cause, written):
    causes, usage = _run(tmp_path, (0, NOVA, [size]), (10, NOVA, [size]))
    assert causes == [cause, "" if written else cause]
    assert usage == [(0, written, size - written), (written, 0, size - written)]


@pytest.mark.parametrize("second,written", [(1000, 1000), (999, 0)])
def test_nova_spaces_its_checkpoints_by_the_minimum(tmp_path, second, written):
    # Nova's table gives the minimum per checkpoint: the second needs 1,000 past the first
    causes, usage = _run(tmp_path, (0, NOVA, [1000]), (10, NOVA, [1000, second]))
    assert causes == ["cold", ""] and usage[1] == (1000, written, second - written)


def test_a_model_without_documented_caching_says_its_rule_is_the_stated_default(tmp_path):
    # no minimum assumed: 1 token is written; a 5m TTL: gone 5 s past it (ANTHROPIC_TTL_GRACE), and the
    # cause says it is a default
    causes, usage = _run(tmp_path, (0, LLAMA, [1]), (299, LLAMA, [1]), (299 + 305, LLAMA, [1]))
    assert causes == ["cold", "", f"ttl_expired (entry at {A} idle 305 s > ttl 300 s; within the TTL's slack, "
                                  "where an entry is often still read (the TTL is a minimum); rules undocumented: stated default)"]
    assert usage == [(0, 1, 0), (1, 0, 0), (0, 1, 0)]


def test_a_claude_id_the_tables_lack_says_its_minimum_is_assumed(tmp_path):
    causes, _ = _run(tmp_path, (0, UNLISTED, [1023]))
    assert causes == ["below_minimum (1023 tokens; model not in the Claude tables, its minimum undocumented: stated default)"]


def test_bedrock_describes_the_rows_it_applies():
    p = get_policy("bedrock", listed_only=False)
    nova = p.describe(NOVA)
    assert (nova["platform rules"], nova["tools"]) == (NOVA_MIN_TOKENS["nova-lite"].source, NOVA_TOOLS_CHECKPOINT.source)
    assert nova["minimum cacheable tokens"].startswith("1000 (") and "past the previous checkpoint" in nova["minimum cacheable tokens"]
    llama = p.describe(LLAMA)
    assert llama["platform rules"] == BEDROCK_UNDOCUMENTED.source and "tools" not in llama
    unlisted = p.describe(UNLISTED)
    assert unlisted["platform rules"] == UNLISTED_CLAUDE.source and "tools" not in unlisted
    claude = p.describe("claude-sonnet-4-5")
    assert claude["platform rules"] == BEDROCK.source and "tools" not in claude
    assert [documented(m) for m in (NOVA, LLAMA, UNLISTED, "claude-sonnet-4-5")] == [True, False, False, True]
    assert bedrock_min_tokens(LLAMA) == (BEDROCK_UNDOCUMENTED, False)
    # a Nova model outside the table (Nova Sonic, Nova 2): the undocumented default, not Nova 1's row
    assert bedrock_min_tokens("us.amazon.nova-sonic-v1:0") == (BEDROCK_UNDOCUMENTED, False)
    assert bedrock_min_tokens("us.amazon.nova-2-lite-v1:0") == (BEDROCK_UNDOCUMENTED, False)


@pytest.mark.parametrize("model,family", [
    ("us.amazon.nova-lite-v1:0", "nova-lite"),
    ("amazon.nova-pro-v1:0", "nova-pro"),
    ("arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.amazon.nova-micro-v1:0", "nova-micro"),
    ("bedrock/converse/us.amazon.nova-premier-v1:0", "nova-premier"),   # a gateway's path before the id
    ("bedrock/converse/amazon.nova-lite", "nova-lite"),
    ("bedrock/converse/claude-sonnet-4-5", None),
    ("xamazon.nova-lite-v1:0", None),
])
def test_nova_is_read_from_the_id_after_any_path(model, family):
    from prefixsim.providers.bedrock import nova_family

    assert nova_family(model) == family
