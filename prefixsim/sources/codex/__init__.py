"""Codex CLI session rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): `rollout.py` reads a
rollout's lines into the API calls it records, `calibrate.py` rebuilds each call's prompt from the
observed sizes (a rollout, like a Claude Code transcript, holds no tool definitions and no token
counts per item), replayed under OpenAI's automatic caching (docs/rules.md#codex-cli-rollouts)."""
