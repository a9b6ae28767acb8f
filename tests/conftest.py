import datetime as dt
import os
import re
import socket
from pathlib import Path

import pytest

from prefixsim.core.pricing import PriceBook
from prefixsim.model import Block, Layer, Request

DATA = Path(__file__).resolve().parent / "data"
# The start-up memo (prefixsim/_perf/diskcache.py) stays off in tests and the commands they start, so every
# test computes what it checks; tests/perf/test_diskcache.py turns it on in a temporary folder.
os.environ["PREFIXSIM_CACHE_DIR"] = "off"
# `replay` fits its tables to $COLUMNS when set: a shell that exports it must not change what tests see.
os.environ.pop("COLUMNS", None)
PRICE_DATE = dt.date(2026, 11, 30)
#: The genai-prices release a price's source names ("genai-prices 0.2.5 bundled data: ..."): output says
#: which data priced it, but a release that changes no figure a test reads must not fail the test, so
#: expected texts are compared with it left out (a changed price still fails: the figures differ).
UPSTREAM_RELEASE = re.compile(r"genai-prices \d+(?:\.\d+)+")


def replay_says(path) -> tuple[dict, str, str]:
    """What `prefixsim replay PATH` says: its JSON summary, its text and its text with --requests (each
    text's white space folded, so a sentence is found whatever the wrapping), at 100 columns."""
    import json

    from click.testing import CliRunner

    from prefixsim.cli import cli

    out = CliRunner().invoke(cli, ["replay", str(path), "--format", "json"])
    assert out.exit_code == 0, out.output
    texts = [" ".join(CliRunner().invoke(cli, ["replay", str(path), *more, "--width", "100"]).output.split())
             for more in ([], ["--requests"])]
    return json.loads(out.stdout)["summary"], texts[0], texts[1]


def unversioned(text: str) -> str:
    """`text` with the genai-prices release it names left out (UPSTREAM_RELEASE)."""
    return UPSTREAM_RELEASE.sub("genai-prices <release>", text)


def make_request(sizes, bps=None, model="claude-sonnet-4-5", layers=None, tag=b"", params=(b"", b"", b""),
                 auto=None):
    """Blocks given by token counts: b1 tools, b2 system, the rest messages (unless `layers` says).
    `bps` maps 1-based block numbers to a TTL."""
    bps = bps or {}
    out = []
    for i, n in enumerate(sizes, start=1):
        layer = layers[i - 1] if layers else (Layer.TOOLS if i == 1 else Layer.SYSTEM if i == 2 else Layer.MESSAGES)
        out.append(Block(layer, tag + b"block-%d" % i, f"b{i}", bps.get(i), tokens=n))
    return Request(model=model, blocks=tuple(out), layer_params=params, auto_cache=auto)


def split(outcome):
    u = outcome.usage
    return (u.cache_read, u.cache_write_1h, u.cache_write_5m, u.input_tokens)


@pytest.fixture
def prices():
    return PriceBook(when=PRICE_DATE)


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a socket fails the test."""
    def guard(*a, **k):
        raise AssertionError("network access attempted")
    monkeypatch.setattr(socket.socket, "connect", guard)
    monkeypatch.setattr(socket.socket, "connect_ex", guard)
    monkeypatch.setattr(socket, "create_connection", guard)
    yield


def data_file(*parts):
    """A file of real traffic under tests/data (byte-exact copies, provenance in tests/data/SOURCES.md).
    The folder ships with the repository, so a missing file is a failure, never a skip."""
    p = DATA.joinpath(*parts)
    assert p.exists(), f"{p} is missing from tests/data"
    return p


def cli_run(args, capsys):
    """(exit code, stdout, stderr) of `prefixsim ARGS` through its console entry point (exit 0 when
    it returns without SystemExit)."""
    from prefixsim.cli import main

    try:
        code = main(args)
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    return code or 0, out.out, out.err


def cli_exit(args, capsys):
    """(exit code, stdout, stderr) of `prefixsim ARGS`, which must end in SystemExit (the console
    entry point's every path)."""
    from prefixsim.cli import main

    with pytest.raises(SystemExit) as e:
        main(args)
    out = capsys.readouterr()
    return e.value.code, out.out, out.err
