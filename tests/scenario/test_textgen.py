"""Filler text: the memo and the prefix encoding only skip work, never change a text."""
import random

import pytest

from prefixsim.core.tokens import get_tokenizer
from prefixsim.scenario import textgen
from prefixsim.scenario.textgen import KINDS, TextGen

ASKS = [(50, "prose"), (300, "code"), (7, "json"), (1200, "code"), (50, "prose"), (90, "json"), (2, "prose")]


def plain(tokenizer, seed, asks):
    """The generator without memo or prefix encoding: what every text must equal."""
    rng, enc, out = random.Random(seed), tokenizer.enc, []
    for n, kind in asks:
        size = max(8, n)
        while True:
            ids = enc.encode_ordinary(KINDS[kind](rng, size))
            if len(ids) >= n:
                out.append(enc.decode(ids[:n]))
                break
            size *= 2
    return out


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_memoized_texts_equal_plain_generation(seed):
    tok = get_tokenizer("cl100k_base")
    more = ASKS + [(400, "code")]
    want = plain(tok, seed, more)
    textgen._MEMO.clear()
    assert [TextGen(tok, seed).text(n, k) for n, k in [ASKS[0]]] == want[:1]
    # memo hits for the shared start, then generation from the restored RNG state
    gen = TextGen(tok, seed)
    assert [gen.text(n, k) for n, k in ASKS] == want[:len(ASKS)]
    gen = TextGen(tok, seed)   # all hits, then one miss
    assert [gen.text(n, k) for n, k in more] == want
