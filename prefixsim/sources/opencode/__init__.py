"""OpenCode sessions (anomalyco/opencode, formerly sst/opencode): `storage.py` reads the three ways
OpenCode keeps them (the JSON storage folder, the SQLite database of later versions, an `opencode
export` document), `steps.py` turns each model step into a request, rebuilt from the observed sizes
as Codex rollouts are (`codex/calibrate.py`) and replayed under the rules of the provider behind it
(docs/rules.md#opencode-sessions)."""
