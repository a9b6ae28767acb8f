"""Provider cache policies; each module models one family's rules from tables.py. The policies by
name (`PROVIDERS`, `get_policy`) are in registry.py: it names the serving engines' policy too, which
sits above the provider rules (engines/policy.py builds on providers/base.py)."""
from __future__ import annotations

from prefixsim.providers.base import Decision, Policy

__all__ = ["Decision", "Policy"]
