"""Tokenizers work with no network, from verified files, and count each distinct block once."""
import hashlib

import pytest

from prefixsim.core import tokens as tokenize
from prefixsim.core.tokens import TokenCounter, get_tokenizer
from prefixsim.model import Block, Layer


@pytest.mark.parametrize("name,text,n", [
    ("cl100k_base", "hello world", 2), ("o200k_base", "hello world", 2),
    ("cl100k_base", "The quick brown fox jumps over the lazy dog.", 10),
    ("approx", "abcdefghi", 3),
])
def test_counts_offline(no_network, name, text, n):
    assert get_tokenizer(name).count_text(text) == n


def test_bpe_files_match_tiktokens_pinned_hashes():
    for name, (url, sha) in tokenize.BPE_FILES.items():
        path = tokenize.bpe_path(name)
        assert path.name == hashlib.sha1(url.encode()).hexdigest()
        assert hashlib.sha256(path.read_bytes()).hexdigest() == sha


def test_a_corrupt_bpe_file_is_refused(tmp_path, monkeypatch):
    src = tokenize.bpe_path("cl100k_base")
    bad = tmp_path / src.name
    bad.write_bytes(src.read_bytes()[:-10] + b"0000000000")
    monkeypatch.setattr(tokenize, "ENCODINGS_DIR", tmp_path)
    monkeypatch.setattr(tokenize, "_verified", set())
    with pytest.raises(RuntimeError, match="sha256"):
        tokenize.verify_bpe("cl100k_base")


def test_unknown_tokenizer_lists_valid_ones():
    from prefixsim.errors import UserError
    with pytest.raises(UserError, match="cl100k_base"):
        get_tokenizer("gpt2")


def test_each_distinct_block_is_tokenized_once():
    counter = TokenCounter(get_tokenizer("cl100k_base"))
    blocks = [Block(Layer.MESSAGES, f"message number {i}".encode()) for i in range(50)]
    for n in range(1, 51):          # every request repeats the whole history
        for b in blocks[:n]:
            counter.count(b)
    assert counter.bytes_tokenized == sum(len(b.data) for b in blocks)


def test_fixed_size_blocks_skip_the_tokenizer():
    counter = TokenCounter(get_tokenizer("cl100k_base"))
    assert counter.count(Block(Layer.TOOLS, b"x", tokens=1234)) == 1234
    assert counter.bytes_tokenized == 0


# --- long texts are counted in pieces ---------------------------------------------------------------

TRICKY = list("abcXYZ éÉ漢字 \n\t'’\"/.,;:-_0123456789") + ["\u0301", "\r\n", "\\n", "'s", "'ll", " s", "  ",
                                                             "😀", "ß", "İ"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_a_text_cut_where_pieces_end_counts_as_the_whole(name):
    """Every place `pieces` may cut (a letter, then no letter, mark or apostrophe) is a pre-token
    boundary of both encodings: the two halves count exactly what the whole does."""
    import random

    enc = get_tokenizer(name).enc
    pat = tokenize._cut_pattern()
    rng = random.Random(7)
    checked = 0
    for _ in range(3000):
        text = "".join(rng.choice(TRICKY) for _ in range(rng.randrange(5, 80)))
        for m in pat.finditer(text):
            a, b = text[: m.end()], text[m.end():]
            assert len(enc.encode_ordinary(a)) + len(enc.encode_ordinary(b)) == len(enc.encode_ordinary(text)), \
                (a, b)
            checked += 1
    assert checked > 10_000


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_a_long_text_counts_exactly_in_pieces(name, monkeypatch):
    monkeypatch.setattr(tokenize, "CHUNK_CHARS", 4096)
    tok = get_tokenizer(name)
    prose = ("The cache key of a prefix is a chained digest; «naïve» café, 漢字かな, it's 42 tokens.\n"
             "    def f(x): return x ** 2  # code\n") * 2000
    parts = list(tokenize.pieces(prose, 4096))
    assert len(parts) > 40 and "".join(parts) == prose
    assert tok.count_text(prose) == len(tok.enc.encode_ordinary(prose))


def test_a_stretch_without_a_boundary_is_cut_within_the_stated_tolerance():
    """Digits only: no place to cut exactly, so a piece ends at the size; measured at most 1 token
    per forced cut (the figure the docstring of `pieces` states)."""
    enc = get_tokenizer("cl100k_base").enc
    text = "1234567890" * 100_000
    parts = list(tokenize.pieces(text))
    forced = len(parts) - 1
    diff = sum(len(enc.encode_ordinary(p)) for p in parts) - len(enc.encode_ordinary(text))
    assert forced == 3 and 0 <= diff <= forced


@pytest.mark.slow
def test_counting_a_long_text_holds_a_piece_not_the_whole():
    """8 MB of prose: whole, the token list alone held ~60 MB (Python ints); in pieces the peak
    Python allocation is a piece's worth."""
    import tracemalloc

    tok = get_tokenizer("cl100k_base")
    text = "lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 140_000
    whole = len(tok.enc.encode_ordinary(text))
    tracemalloc.start()
    try:
        n = tok.count_text(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert n == whole
    assert peak < 8 << 20, peak


@pytest.mark.slow
def test_a_megabyte_of_whitespace_does_not_overflow_o200k():
    """tiktoken's o200k_base pattern overflows its regex stack (a Rust panic, not an Exception) on
    about 1 M characters of whitespace in one call; pieces keep every call far below that."""
    assert get_tokenizer("o200k_base").count_text(" " * 1_500_000) == 11_720


# --- loading: once per process, only when a text is counted ---------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_ranks_read_as_tiktokens_own_reader_reads_them(name):
    from tiktoken.load import load_tiktoken_bpe

    ours = tokenize.read_ranks(name)
    theirs = load_tiktoken_bpe(str(tokenize.bpe_path(name)), expected_hash=tokenize.BPE_FILES[name][1])
    assert ours == theirs


def test_the_encoding_loads_at_the_first_count_and_once(monkeypatch):
    loads = []
    real = tokenize.read_ranks
    monkeypatch.setattr(tokenize, "_ENCODINGS", {})
    monkeypatch.setattr(tokenize, "read_ranks", lambda name: loads.append(name) or real(name))
    tok = get_tokenizer("cl100k_base")
    assert loads == []                                   # a tokenizer nobody asks to count costs nothing
    assert tok.count_text("hello world") == 2
    assert get_tokenizer("cl100k_base").count_text("hello there") == 2
    assert loads == ["cl100k_base"]


def test_counters_share_one_memo_per_process(monkeypatch):
    monkeypatch.setattr(tokenize, "_SHARED_MEMOS", {})
    block = Block(Layer.MESSAGES, "a block two simulators both send".encode())
    first, second = TokenCounter(get_tokenizer("cl100k_base")), TokenCounter(get_tokenizer("cl100k_base"))
    assert first.count(block) == second.count(block) == len(get_tokenizer("cl100k_base").enc.encode_ordinary(
        "a block two simulators both send"))
    assert (first.bytes_tokenized, second.bytes_tokenized) == (len(block.data), 0)
    other = TokenCounter(get_tokenizer("o200k_base"))     # another encoding counts for itself
    other.count(block)
    assert other.bytes_tokenized == len(block.data)
