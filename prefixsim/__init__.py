"""prefixsim: an offline prefix-cache simulator and cost calculator for LLM agent harnesses.

Heavy modules (pandas, matplotlib, tiktoken) load lazily so `prefixsim --help` stays fast.
"""
__version__ = "0.1.0"
