"""The break-even studies by name, apart from their parameters (studyparams.py, which needs the
scenario field types and so pydantic): `prefixsim --help` lists the studies without loading either."""
from __future__ import annotations

STUDY_NAMES = ("fork-vs-subagent", "ttl", "stagger", "invalidation", "minimum")

#: Studies priced on another provider than Anthropic (their default model is chosen by the price date:
#: providers/gemini_explicit.py default_study_model); they stay out of the design-review report, whose
#: studies run on the scenarios' Claude model.
OTHER_PROVIDER = {"gemini-explicit": "gemini"}
#: Studies priced on the API and on self-hosted GPUs (prefixsim/serving/): the design-review report
#: runs one only for a scenario whose `studies:` names it (at that scenario's sizes), its question
#: being one a team asks of its own design, not of every design reviewed.
SERVING_STUDIES = ("api-vs-selfhosted",)
BREAKEVEN_STUDIES = (*STUDY_NAMES, *OTHER_PROVIDER, *SERVING_STUDIES)
#: The studies a scenario's `studies:` may name (the report's).
SCENARIO_STUDIES = (*STUDY_NAMES, *SERVING_STUDIES)
