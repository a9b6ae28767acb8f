"""Deterministic filler text of a given token size that tokenizes like prose, code or JSON.

Sizes are met through the scenario's own tokenizer: text is generated generously, encoded, cut to
the wanted number of tokens and decoded (tiktoken), or cut to 4 characters a token (approx).

Generation dominates a cold `prefixsim run` (variants and sweep values replay the same timeline), so
texts are memoized process-wide by the sequence of requests that led to them (see `TextGen`).
"""
from __future__ import annotations

import itertools
import random
from array import array

_WORDS = ("the of and to in is that for it with as was on be by this are from or have an they which "
          "one you were her all she there would their we him been has when who will more no if out so "
          "said what up its about into than them can only other new some could time these two may then "
          "do first any my now such like our over man me even most made after also did many before must "
          "through back years where much your way well down should because each just those people how "
          "too little state good very make world still own see men work long get here between both life "
          "being under never day same another know while last might us great old year off come since "
          "against go came right used take three states himself few house use during without again place "
          "cache prefix request token model agent fork session history tool system prompt message").split()
_IDENTS = ("config path data result items value index buffer request response client session cache "
           "handler parser token block digest entry store chain offset length count total").split()
_FUNCS = ("load save parse render update fetch compute merge split check build apply resolve".split())


def _prose(rng: random.Random, n_words: int) -> str:
    words = []
    for i in range(n_words):
        w = rng.choice(_WORDS)
        if i == 0 or words[-1].endswith("."):
            w = w.capitalize()
        if rng.random() < 0.08:
            w += "."
        elif rng.random() < 0.05:
            w += ","
        words.append(w)
    return " ".join(words)


def _code(rng: random.Random, n_lines: int) -> str:
    lines = []
    indent = 0
    for _ in range(n_lines):
        r = rng.random()
        a, b = rng.choice(_IDENTS), rng.choice(_IDENTS)
        if r < 0.15:
            lines.append("    " * indent + f"def {rng.choice(_FUNCS)}_{a}({b}, {rng.choice(_IDENTS)}=None):")
            indent = min(indent + 1, 3)
        elif r < 0.25 and indent:
            lines.append("    " * indent + f"return {a}.{rng.choice(_FUNCS)}({b})")
            indent -= 1
        elif r < 0.4:
            lines.append("    " * indent + f"if {a} is not None and len({b}) > {rng.randint(0, 512)}:")
            indent = min(indent + 1, 3)
        else:
            lines.append("    " * indent + f"{a} = {b}.{rng.choice(_FUNCS)}({rng.randint(0, 99)}, \"{rng.choice(_IDENTS)}\")")
    return "\n".join(lines)


def _json(rng: random.Random, n_items: int) -> str:
    items = [f'{{"{rng.choice(_IDENTS)}":"{rng.choice(_WORDS)}_{rng.randint(0, 9999)}",'
             f'"{rng.choice(_IDENTS)}":{rng.randint(0, 100000)},"ok":{str(rng.random() < 0.5).lower()}}}'
             for _ in range(n_items)]
    return "[" + ",".join(items) + "]"


KINDS = {"prose": _prose, "code": _code, "json": _json}


#: (node, n_tokens, kind) -> (text, next node, RNG state at the next node). A node names a generator's
#: position: its encoding and seed, then every (n_tokens, kind) asked of it so far; equal positions
#: hold equal RNG states. States are packed (2.5 KB instead of 625 int objects).
_MEMO: dict[tuple, tuple[str, int, bytes]] = {}
_MEMO_LIMIT = 100_000
_NODES = itertools.count(1)
#: Tokens encoded past the wanted size when only a prefix of the raw text is encoded: tiktoken splits
#: text into chunks (words, digit triples, whitespace runs; at most ~16 characters in these texts)
#: before BPE, and only the last chunks of a cut text can differ from the whole text's.
_CUT_MARGIN = 64


class TextGen:
    """Text of an exact token size under `tokenizer` (a prefixsim Tokenizer), seeded.

    Outputs are those of plain generation from `random.Random(seed)`; the memo only skips work. After
    a memo hit the RNG is left behind and restored from the hit's packed state on the next miss.
    """

    def __init__(self, tokenizer, seed: int = 0) -> None:
        self.tokenizer = tokenizer
        self.rng = random.Random(seed)
        self._enc = tokenizer.enc
        self._node: int | tuple = (tokenizer.name, seed)
        self._behind: bytes | None = None   # the state the RNG should be in, when it is not

    def text(self, n_tokens: int, kind: str = "prose") -> str:
        if n_tokens <= 0:
            return ""
        key = (self._node, n_tokens, kind)
        hit = _MEMO.get(key)
        if hit is not None:
            text, self._node, self._behind = hit
            return text
        if self._behind is not None:
            self.rng.setstate((3, tuple(array("I", self._behind)), None))
            self._behind = None
        text = self._generate(n_tokens, kind)
        if len(_MEMO) >= _MEMO_LIMIT:
            _MEMO.clear()
        self._node = next(_NODES)
        _MEMO[key] = (text, self._node, array("I", self.rng.getstate()[1]).tobytes())
        return text

    def _generate(self, n_tokens: int, kind: str) -> str:
        make = KINDS[kind]
        if self._enc is None:  # chars / 4
            out = ""
            while len(out) < 4 * n_tokens:
                out += make(self.rng, max(8, n_tokens)) + "\n"
            return out[: 4 * n_tokens]
        size = max(8, n_tokens)
        while True:
            raw = make(self.rng, size)
            ids = self._head_ids(raw, n_tokens)
            if len(ids) >= n_tokens:
                return self._enc.decode(ids[:n_tokens])
            size *= 2

    def _head_ids(self, raw: str, n_tokens: int) -> list[int]:
        """The token ids of `raw`, exact in at least its first `n_tokens`: generation makes several
        times the text needed, so a prefix is encoded first and the whole only when it falls short."""
        cut = 8 * (n_tokens + _CUT_MARGIN)
        if cut < len(raw):
            ids = self._enc.encode_ordinary(raw[:cut])
            if len(ids) >= n_tokens + _CUT_MARGIN:
                return ids
        return self._enc.encode_ordinary(raw)
