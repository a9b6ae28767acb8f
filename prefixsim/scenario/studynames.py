"""The break-even studies by name, apart from their parameters (studyparams.py, which needs the
scenario field types and so pydantic): `prefixsim --help` lists the studies without loading either."""
from __future__ import annotations

STUDY_NAMES = ("fork-vs-subagent", "ttl", "stagger", "invalidation", "minimum")

#: Studies priced on another provider than Anthropic (their default model is chosen by the price date:
#: providers/gemini_explicit.py default_study_model); they stay out of the design-review report, whose
#: studies run on the scenarios' Claude model.
OTHER_PROVIDER = {"gemini-explicit": "gemini"}
#: Studies priced on the API and on self-hosted GPUs (prefixsim/serving/): out of the design-review
#: report too, whose studies are the API's alone.
SERVING_STUDIES = ("api-vs-selfhosted",)
BREAKEVEN_STUDIES = (*STUDY_NAMES, *OTHER_PROVIDER, *SERVING_STUDIES)
