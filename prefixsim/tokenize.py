"""Token counting: tiktoken encodings served offline from the package, or the seeds' chars/4 estimate.

Counts are memoized by block content digest, so a block repeated by every later request of a
session is tokenized once per run.
"""
from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Protocol

from .errors import UserError
from .model import Block

ENCODINGS_DIR = Path(__file__).parent / "encodings"

#: name -> (tiktoken's download URL, the sha256 tiktoken pins for it in tiktoken_ext/openai_public.py)
BPE_FILES: dict[str, tuple[str, str]] = {
    "cl100k_base": ("https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
                    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
    "o200k_base": ("https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
                   "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
}

TOKENIZERS = ("approx", *BPE_FILES)

_lock = threading.Lock()
_verified: set[str] = set()


def bpe_path(name: str) -> Path:
    """Where the BPE file for `name` lives: named by tiktoken's cache key (sha1 of its URL)."""
    url, _ = BPE_FILES[name]
    return ENCODINGS_DIR / hashlib.sha1(url.encode()).hexdigest()


def verify_bpe(name: str) -> None:
    """Refuse a BPE file whose bytes are not the ones tiktoken pins (a corrupt or swapped file)."""
    if name in _verified:
        return
    path = bpe_path(name)
    expected = BPE_FILES[name][1]
    try:
        actual = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as e:
        raise RuntimeError(f"BPE file for {name} is missing from the installation: {path}") from e
    if actual != expected:
        raise RuntimeError(f"BPE file {path} has sha256 {actual}, expected {expected}")
    _verified.add(name)


def load_encoding(name: str):
    """A tiktoken Encoding read from our verified copy through tiktoken's own cache mechanism.

    TIKTOKEN_CACHE_DIR points tiktoken at the package folder only for the duration of the load;
    since the file is verified first, tiktoken finds a matching cache entry and never downloads.
    """
    import tiktoken

    with _lock:
        verify_bpe(name)
        saved = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = str(ENCODINGS_DIR)
        try:
            return tiktoken.get_encoding(name)
        finally:
            if saved is None:
                del os.environ["TIKTOKEN_CACHE_DIR"]
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = saved


class Tokenizer(Protocol):
    name: str

    def count_text(self, text: str) -> int: ...


class ApproxTokenizer:
    """The seeds' estimate: characters / 4, rounded up (only relative sizes matter)."""

    name = "approx"
    enc = None  # no BPE: text generators size text by characters

    def count_text(self, text: str) -> int:
        return (len(text) + 3) // 4


#: Texts longer than this are counted in pieces: encoding 100 MB at once held ~1 GB of token ids
#: and pre-token strings; in pieces the peak is a piece's worth. Also below the ~1 M characters of
#: whitespace at which tiktoken's o200k_base pattern overflows its regex stack (a Rust panic).
CHUNK_CHARS = 1 << 18

# Where a piece may end so the count stays exact: right after a letter, before a character that is not
# a letter, a combining mark or an apostrophe. Both encodings' pre-tokenizers (cl100k_base, o200k_base)
# end a run of letters exactly there, whatever follows, and start the next pre-token there, so the BPE
# sees the same pre-tokens as for the whole text. (o200k glues 's 't 're ... to the word: hence no
# apostrophe; marks extend a word in both.)
_CUT = None


def _cut_pattern():
    global _CUT
    if _CUT is None:
        import regex   # tiktoken's own dependency; Python's re has no \p{L}

        _CUT = regex.compile(r"\p{L}(?=[^\p{L}\p{M}'])")
    return _CUT


def pieces(text: str, size: int = CHUNK_CHARS):
    """`text` as consecutive slices of about `size` characters, each ending where a pre-token ends
    (see _CUT): counting the slices gives the count of the whole. A stretch of size / 2 characters
    without such a place (no letter followed by a non-letter: a run of one letter, digits only,
    whitespace only) is cut at `size`: that cut may merge differently than the whole text would. Measured
    on digit runs, one-letter runs, random letters, whitespace and punctuation: at most one token per
    such cut, i.e. one token per 256 K characters of such a stretch (tests/test_tokenize.py)."""
    start, n = 0, len(text)
    pat = _cut_pattern()
    while n - start > size:
        target = start + size
        cut = target
        lo = start + size // 2
        hi = target
        while hi > lo:   # search backwards in 4 KiB windows: the last place at or before the target
            wlo = max(lo, hi - 4096)
            found = None
            for m in pat.finditer(text, wlo, hi + 1):
                found = m.end()
            if found is not None:
                cut = found
                break
            hi = wlo
        yield text[start:cut]
        start = cut
    yield text[start:]


class TiktokenTokenizer:
    def __init__(self, name: str) -> None:
        self.name = name
        self.enc = load_encoding(name)

    def count_text(self, text: str) -> int:
        # encode_ordinary: special-token strings in user content are plain text, never an error.
        if len(text) <= CHUNK_CHARS:
            return len(self.enc.encode_ordinary(text))
        return sum(len(self.enc.encode_ordinary(part)) for part in pieces(text))


def get_tokenizer(name: str) -> Tokenizer:
    if name == "approx":
        return ApproxTokenizer()
    if name in BPE_FILES:
        return TiktokenTokenizer(name)
    raise UserError(f"unknown tokenizer {name!r} (valid: {', '.join(TOKENIZERS)})")


class TokenCounter:
    """Counts block tokens once per distinct block content; a block with a fixed size skips it."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self._memo: dict[bytes, int] = {}
        self.bytes_tokenized = 0

    def count(self, block: Block) -> int:
        if block.tokens is not None:
            return block.tokens
        n = self._memo.get(block.key)
        if n is None:
            self.bytes_tokenized += len(block.data)
            n = self.tokenizer.count_text(block.data.decode("utf-8", errors="replace"))
            self._memo[block.key] = n
        return n


def common_prefix_tokens(tokenizer: Tokenizer, a: bytes, b: bytes) -> tuple[int, int]:
    """(tokens, bytes) of the longest common start of two texts made of whole tokens of both: the
    tokens are compared one by one, so a token that straddles the first differing byte is not counted.
    The chars/4 estimate has no tokens: it counts whole 4-character steps of the common start."""
    ta, tb = a.decode("utf-8", errors="replace"), b.decode("utf-8", errors="replace")
    enc = getattr(tokenizer, "enc", None)
    if enc is None:
        k = 0
        for x, y in zip(ta, tb):
            if x != y:
                break
            k += 1
        n = k // 4
        return n, len(ta[:4 * n].encode())
    xa = enc.encode_ordinary(ta)
    n = 0
    for x, y in zip(xa, enc.encode_ordinary(tb)):
        if x != y:
            break
        n += 1
    return n, len(enc.decode_bytes(xa[:n]))
