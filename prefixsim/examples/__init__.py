"""The example scenarios, shipped inside the package so `prefixsim run --examples` and `prefixsim init`
work after `pip install prefixsim` from any folder. They are the repository's scenarios/ files,
byte for byte (tests/scenario/test_examples.py keeps the two in step)."""
from __future__ import annotations

from pathlib import Path


def examples_dir() -> Path:
    return Path(__file__).resolve().parent


def example_files() -> list[Path]:
    return sorted(examples_dir().glob("*.yaml"))
