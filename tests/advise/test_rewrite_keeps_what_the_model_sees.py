"""A rewritten request keeps what the model sees of each block (`Block.sees`): the advice's "stable
key order" candidate re-serializes JSON, and used to rebuild the blocks without it, so an automatic
cache stopped reading inside a log's system message in that candidate only and the candidate was
judged against a baseline that read more."""
import json

from prefixsim.advise import rewrite
from prefixsim.replay import replay
from prefixsim.sources import load

DOC = " ".join(f"word{i}" for i in range(3000))


def _line(k):
    body = {"model": "gpt-4o-2024-08-06", "messages": [
        {"role": "system", "content": DOC + f" Today is day {k}."},
        {"role": "user", "content": f"question {k}"}]}
    usage = {"prompt_tokens": 6030, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 5888 if k else 0}}
    return {"request": body, "response": {"id": f"c{k}", "object": "chat.completion", "model": "gpt-4o-2024-08-06",
                                          "created": 1733050000 + 10 * k, "usage": usage,
                                          "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}]}}


def test_the_stable_order_candidate_reads_what_the_recorded_design_reads(tmp_path):
    p = tmp_path / "log.jsonl"
    p.write_text("".join(json.dumps(_line(k)) + "\n" for k in range(3)))
    records = load(p)
    step = rewrite.stable_order()
    rewritten = [step(r) for r in records]
    assert [b.sees for b in rewritten[1].call.request.blocks] == [b.sees for b in records[1].call.request.blocks]
    base = [r.predicted.cache_read for r in replay(records).rows]
    assert base[1] > 0
    assert [r.predicted.cache_read for r in replay(rewritten).rows] == base


def test_the_claude_code_package_keeps_its_name():
    import importlib

    import prefixsim.sources  # noqa: F401  (its reader table binds the transcript module privately)
    import prefixsim.sources.claude_code as cc
    import prefixsim.sources.claude_code.order as order

    assert cc.__name__ == "prefixsim.sources.claude_code" and hasattr(cc, "__path__")
    assert order.causal is importlib.import_module("prefixsim.sources.claude_code.order").causal
