"""One rule, every path (issue 30, item 9): an automatic cache that reads inside a message (OpenAI's
128-token steps) reads the same common prefix whether the two requests come from a scenario's blocks
(sized by the tokenizer) or from a log (sized from the observed usage). The log path used to read 0,
`prefix_changed ... messages[1]`: its blocks had fixed sizes, so their text was never compared."""
import json
import random

import pytest

from prefixsim.core.simulator import Simulator
from prefixsim.core.tokens import common_block_tokens, common_bytes, get_tokenizer
from prefixsim.model import Block, Call, Layer, Request
from prefixsim.providers.automatic import _comparable
from prefixsim.replay import replay
from prefixsim.sources import load
from prefixsim.sources.openai_log import render_openai

MODEL = "gpt-4o-2024-08-06"
SYSTEM = "You answer questions about the document the user gives. Be brief and exact."


def _document(words: int) -> str:
    rnd = random.Random(7)
    vocab = ["the", "cache", "reads", "a", "prefix", "of", "every", "request", "and", "writes", "what", "follows", "it", "when", "it", "ends"]
    return " ".join(rnd.choice(vocab) for _ in range(words))


def _body(doc: str, question: str) -> dict:
    return {"model": MODEL, "messages": [{"role": "system", "content": SYSTEM},
                                         {"role": "user", "content": f"Document:\n{doc}\n\nQuestion: {question}"}]}


def _tokens(body: dict) -> int:
    """What OpenAI counts for a Chat body: 3 frame tokens and the role around each content, 3 to prime
    the reply (O-TOK)."""
    enc = get_tokenizer("o200k_base")
    return sum(3 + enc.count_text(m["content"]) + 1 for m in body["messages"]) + 3


def _common(doc: str) -> int:
    """The two bodies' common prefix as the model sees it: the system message whole, then the user
    message's frame and role and its text up to the question."""
    enc = get_tokenizer("o200k_base")
    return 3 + enc.count_text(SYSTEM) + 1 + 3 + enc.count_text(f"Document:\n{doc}\n\nQuestion: ")


def _log(tmp_path, doc: str, read: int):
    a, b = _body(doc, "What does the cache read first?"), _body(doc, "When is the write made?")
    lines = [{"id": "c1", "timestamp": "2026-11-02T09:00:00Z", "request": a,
              "response": {"model": MODEL, "usage": {"prompt_tokens": _tokens(a), "completion_tokens": 10,
                                                     "prompt_tokens_details": {"cached_tokens": 0}}}},
             {"id": "c2", "timestamp": "2026-11-02T09:01:00Z", "request": b,
              "response": {"model": MODEL, "usage": {"prompt_tokens": _tokens(b), "completion_tokens": 10,
                                                     "prompt_tokens_details": {"cached_tokens": read}}}}]
    p = tmp_path / "log.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return p, a, b


@pytest.mark.parametrize("words", [4500, 1200])
def test_a_log_reads_inside_the_message_as_a_scenario_does(tmp_path, words):
    doc = _document(words)
    expected = _common(doc) // 128 * 128
    path, a, b = _log(tmp_path, doc, expected)
    logged = replay(load(path)).rows[1]
    assert logged.predicted.cache_read == logged.observed.cache_read == expected
    # the scenario path: the same bodies rendered, every block sized by the tokenizer
    sim = Simulator("openai", tokenizer="o200k_base")
    first, second = (sim.step(Call(t=t, request=render_openai(body))) for t, body in ((0.0, a), (60.0, b)))
    assert first.usage.cache_read == 0
    assert second.usage.cache_read == expected


def test_a_synthetic_block_is_never_compared_inside():
    """Fixed-size blocks without what the model sees (a transcript's calibrated blocks carry labels)
    are not compared inside, whatever their bytes."""
    tok = get_tokenizer("o200k_base")
    a = Block(Layer.MESSAGES, b"history[3] (added by req_a)", tokens=500)
    b = Block(Layer.MESSAGES, b"history[3] (added by req_b)", tokens=500)
    assert common_block_tokens(tok, a, b)[0] > 0   # their bytes alone would share tokens
    req = Request(model=MODEL, blocks=(b,))
    assert not _comparable(a, (b"", b"", b""), b, req)


def test_what_the_model_sees_counts_no_json_around_the_text():
    """Two log blocks parting right after a shared word: the frame (3) and role, then that word — not
    the JSON keys the log holds around the text."""
    tok = get_tokenizer("o200k_base")
    old = Block(Layer.MESSAGES, b'{"role":"user","part":"Question 0?"}', tokens=9, sees=(2, ("user", "Question 0?")))
    new = Block(Layer.MESSAGES, b'{"role":"user","part":"Question 1?"}', tokens=9, sees=(2, ("user", "Question 1?")))
    tokens, nbytes = common_block_tokens(tok, old, new)
    # o200k: "Question 0?" is "Question", " ", "0", "?": frame 2 + "user" 1 + "Question", " " 2
    assert [tok.enc.decode([x]) for x in tok.enc.encode_ordinary("Question 0?")] == ["Question", " ", "0", "?"]
    assert tokens == 2 + 1 + 2
    assert nbytes == common_bytes(old.data, new.data) == len(b'{"role":"user","part":"Question ')


def test_common_bytes_halves_to_the_first_difference():
    assert common_bytes(b"abcdef", b"abcxef") == 3
    assert common_bytes(b"abc", b"abc") == 3
    assert common_bytes(b"", b"abc") == 0
    assert common_bytes(b"xbc", b"abc") == 0
    assert common_bytes(b"ab", b"abc") == 2
