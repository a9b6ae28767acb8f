"""Tokenizers work with no network, from verified files, and count each distinct block once."""
import hashlib

import pytest

from prefixsim import tokenize
from prefixsim.model import Block, Layer
from prefixsim.tokenize import TokenCounter, get_tokenizer


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
