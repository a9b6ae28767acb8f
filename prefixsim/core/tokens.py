"""Token counting: tiktoken encodings served offline from the package, or the seeds' chars/4 estimate.

Counts are memoized by block content digest, so a block repeated by every later request of a
session is tokenized once per run.
"""
from __future__ import annotations

import threading
from binascii import a2b_base64
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import xxhash

from prefixsim._perf.diskcache import DiskMemo, package_stamp
from prefixsim.errors import UserError
from prefixsim.model import Block

if TYPE_CHECKING:
    from prefixsim._perf.diskcache import DiskMemo

ENCODINGS_DIR = Path(__file__).resolve().parents[1] / "encodings"

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
    import hashlib  # lazy: only when an encoding is loaded: a replay whose counts are remembered never needs it

    url, _ = BPE_FILES[name]
    return ENCODINGS_DIR / hashlib.sha1(url.encode()).hexdigest()


def verify_bpe(name: str) -> None:
    """Refuse a BPE file whose bytes are not the ones tiktoken pins (a corrupt or swapped file)."""
    if name not in _verified:
        _verified_bytes(name)


#: Encodings loaded in this process: a load is ~0.1-0.3 s (100 K ranks parsed, the BPE built).
_ENCODINGS: dict[str, object] = {}


def load_encoding(name: str):
    """A tiktoken Encoding built from our verified copy of its BPE file, once per process.

    tiktoken's own constructor (tiktoken_ext.openai_public) gives the pattern and special tokens;
    the ranks are read from the verified bytes with one C base64 call per line (tiktoken's reader
    spends most of its time in base64.b64decode's Python checks) and no cache directory is looked at.
    """
    enc = _ENCODINGS.get(name)
    if enc is not None:
        return enc
    import tiktoken  # lazy: start-up: tiktoken loads with an encoding only
    import tiktoken_ext.openai_public as public  # lazy: start-up: tiktoken loads with an encoding only

    with _lock:
        enc = _ENCODINGS.get(name)
        if enc is None:
            ranks = read_ranks(name)
            saved = public.load_tiktoken_bpe
            public.load_tiktoken_bpe = lambda *args, **kwargs: ranks
            try:
                params = getattr(public, name)()
            finally:
                public.load_tiktoken_bpe = saved
            enc = _ENCODINGS[name] = tiktoken.Encoding(**params)
    return enc


def read_ranks(name: str) -> dict[bytes, int]:
    """The BPE file of `name` (verified against tiktoken's pinned sha256) as token bytes -> rank,
    the mapping tiktoken.load.load_tiktoken_bpe reads from the same file."""
    words = _verified_bytes(name).split()   # "token rank" lines; base64 has no whitespace
    return dict(zip(map(a2b_base64, words[::2]), map(int, words[1::2])))


def _verified_bytes(name: str) -> bytes:
    import hashlib  # lazy: as in bpe_path

    path = bpe_path(name)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise RuntimeError(f"BPE file for {name} is missing from the installation: {path}") from e
    actual = hashlib.sha256(data).hexdigest()
    if actual != BPE_FILES[name][1]:
        raise RuntimeError(f"BPE file {path} has sha256 {actual}, expected {BPE_FILES[name][1]}")
    _verified.add(name)
    return data


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
        # lazy: start-up: loaded with the tokenizer only
        import regex  # tiktoken's own dependency; Python's re has no \p{L}

        _CUT = regex.compile(r"\p{L}(?=[^\p{L}\p{M}'])")
    return _CUT


def pieces(text: str, size: int = CHUNK_CHARS):
    """`text` as consecutive slices of about `size` characters, each ending where a pre-token ends
    (see _CUT): counting the slices gives the count of the whole. A stretch of size / 2 characters
    without such a place (no letter followed by a non-letter: a run of one letter, digits only,
    whitespace only) is cut at `size`: that cut may merge differently than the whole text would. Measured
    on digit runs, one-letter runs, random letters, whitespace and punctuation: at most one token per
    such cut, i.e. one token per 256 K characters of such a stretch (tests/core/test_tokenize.py)."""
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
    """A tiktoken encoding, loaded when the first text is counted (a replay whose counts all come
    from observed usage never loads it)."""

    def __init__(self, name: str) -> None:
        if name not in BPE_FILES:
            raise UserError(f"unknown tokenizer {name!r} (valid: {', '.join(TOKENIZERS)})")
        self.name = name
        self._enc = None

    @property
    def enc(self):
        if self._enc is None:
            self._enc = load_encoding(self.name)
        return self._enc

    def count_text(self, text: str) -> int:
        # encode_ordinary: special-token strings in user content are plain text, never an error.
        if not text:
            return 0   # without loading the encoding
        if len(text) <= CHUNK_CHARS:
            return len(self.enc.encode_ordinary(text))
        return sum(len(self.enc.encode_ordinary(part)) for part in pieces(text))


_COUNT_MEMOS: dict[str, DiskMemo] = {}


def remembered_count(name: str):
    """`name`'s count_text, remembered across runs (prefixsim._perf.diskcache, keyed by the text's digest and
    stamped with the pinned BPE file and the installed tiktoken): a replay that counts only a few first
    messages it counted before does not build the encoding (~0.3 s). The counts are tiktoken's own."""
    tok = get_tokenizer(name)
    if not isinstance(tok, TiktokenTokenizer):
        return tok.count_text
    memo = _COUNT_MEMOS.get(name)
    if memo is None:
        lib = package_stamp("tiktoken", ("__init__.py", "core.py", "load.py"))
        # keys: xxh3-128 of the text (the digest every block already pays for; a memo of blake2b keys,
        # as written before, has another stamp and is not read)
        memo = _COUNT_MEMOS[name] = DiskMemo(f"counts-{name}", lib and f"{BPE_FILES[name][1]}|{lib}|xxh3")

    def count_text(text: str) -> int:
        key = xxhash.xxh3_128_hexdigest(text.encode("utf-8", "surrogatepass"))
        n = memo.get(key)
        if not isinstance(n, int):
            n = tok.count_text(text)
            memo.put(key, n)
        return n

    return count_text


def get_tokenizer(name: str) -> Tokenizer:
    if name == "approx":
        return ApproxTokenizer()
    if name in BPE_FILES:
        return TiktokenTokenizer(name)
    raise UserError(f"unknown tokenizer {name!r} (valid: {', '.join(TOKENIZERS)})")


#: tokenizer name -> block content key -> tokens, shared by every TokenCounter of the process: the
#: variants and sweep values of `run scenarios/` send the same blocks again (5.06 of 8.06 MB were
#: repeats with a memo per simulator). The chars/4 estimate is cheaper than a lookup kept for ever.
_SHARED_MEMOS: dict[str, dict[bytes, int]] = {}


class TokenCounter:
    """Counts block tokens once per distinct block content (a BPE tokenizer's counts: once per
    process); a block with a fixed size skips it. `bytes_tokenized`: what this counter tokenized."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        shared = isinstance(tokenizer, TiktokenTokenizer)
        self._memo: dict[bytes, int] = _SHARED_MEMOS.setdefault(tokenizer.name, {}) if shared else {}
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


def common_bytes(a: bytes, b: bytes) -> int:
    """Length of the longest common start of two byte strings (by halving: a few slice compares
    instead of a Python loop over a long document)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def common_block_tokens(tokenizer: Tokenizer, old: Block, new: Block) -> tuple[int, int]:
    """(tokens, bytes of `data`) two blocks at one chain position share from their start. A block the
    tokenizer sizes from its bytes compares its bytes; a block a log sized compares what the model
    sees of it (`Block.sees`: the frame tokens before its texts, then its texts in order), so the
    JSON a log holds around a message's text counts no tokens the model did not see (O-PC)."""
    if old.sees is None or new.sees is None:
        return common_prefix_tokens(tokenizer, old.data, new.data)
    (lead, texts), (lead_new, texts_new) = old.sees, new.sees
    k = common_bytes(old.data, new.data)
    if lead != lead_new or k == 0:
        return 0, 0
    n = lead
    for a, b in zip(texts, texts_new):
        if a != b:
            n += common_prefix_tokens(tokenizer, a.encode(), b.encode())[0]
            break
        n += tokenizer.count_text(a)
    return n, k
