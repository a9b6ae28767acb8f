"""DeepSeek's caching rule as data (DS: docs/rules.md#source-keys, docs/rules.md#deepseek): one rule for
every DeepSeek model, its documented retention range and what public traffic shows of it."""
from __future__ import annotations

from prefixsim.providers.tables import AutoRule, Measured

#: DeepSeek's retention as public traffic shows it (docs/rules.md#deepseek): Claude Code on DeepSeek's
#: Anthropic endpoint (LeoDChen's public ~/.claude/projects, deepseek-v4-pro and -flash, 2026), the next
#: request of a conversation after an idle gap read the previous prompt in 9,321 of 9,396 gaps under 10
#: min, 236 of 242 of 10 min-1 h, 41 of 46 of 1-12 h, 5 of 14 of 12-24 h, 0
#: of 4 past 48 h. The documentation says only "hours to days".
DEEPSEEK_MEASURED_TTL = 12 * 3600.0
#: Follow-ups within those 12 hours that read nothing, of all of them (86 read less than the previous
#: prompt).
DEEPSEEK_MEASURED_UNREAD = (15, 9684)
DEEPSEEK_RULE = AutoRule(
    64, 64, 3600.0, 86400.0, float("inf"), False,
    "DS kv_cache, docs/rules.md#deepseek: a hit needs a full match of a persisted 'cache prefix unit': the end of each request's "
    "input, and the common prefix of two requests (readable from the next one); the end-of-output and "
    "fixed-interval units are not modelled (no output text; interval unpublished). 64-token unit and "
    "minimum from news0802 (not restated). Cleared unused after 'hours to days' (news0802): 1 h "
    "pessimistic, 24 h optimistic; the figures shown keep an entry 12 h idle, as public traffic shows",
    partial=False, writes="end", common_units=True,
    measured=Measured(DEEPSEEK_MEASURED_TTL, 64,
                      "OBS, docs/rules.md#deepseek (Claude Code on DeepSeek, LeoDChen's public sessions, 9,797 requests): "
                      "the next request of a conversation read the previous prompt after 1-12 h idle in 41 of 46 gaps, "
                      "after 12-24 h in 5 of 14, past 48 h in 0 of 4",
                      output=True, increment=64, unread=DEEPSEEK_MEASURED_UNREAD))
