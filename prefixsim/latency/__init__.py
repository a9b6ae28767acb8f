"""Time to first token: the per-request model (`model.py`), its defaults from published figures
(`defaults.py`) and its fit to measured traffic (`fit.py`). docs/rules.md#latency."""
