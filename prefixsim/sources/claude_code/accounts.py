"""Whose cache a transcript's calls went to. A prompt cache is an organisation's, kept per workspace
(A-PC): two accounts never read each other's entries, however equal the bytes.
A transcript does not log the account, but it logs the working directory, and a home directory
(`/Users/NAME`, `/home/NAME`, `C:\\Users\\NAME`) is one person's machine: transcripts of several people
(a team's sessions gathered in one folder) are taken as several accounts, each its own namespace
(Request.workspace), so one person's session never reads the prefix another's wrote. A folder whose
calls name one person, or where some name none (a Windows drive, a container's /workspaces), is one
account, as before.

Evidence (entireio/cli, eight people's sessions of Claude Code 2.1.x in one repository): of the
sessions whose first request came within the TTL of another session's on the same model, those whose
only such neighbours were another person's read nothing 9 times of 13, and never the prefix the
replay predicted from that neighbour (0 of 4); with accounts apart, 7 requests are predicted exactly
that were not, none less exactly, and 3 sessions are no longer worse than naive (docs/rules.md,
"Whose cache"). What the calibration learns across sessions still pools every account's: the same
harness version sends the same bytes to all of them."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from prefixsim.sources.claude_code.raw import Raw
from prefixsim.sources.record import Record

_HOME = re.compile(r"^(?:/Users/|/home/|[A-Za-z]:[\\/]+Users[\\/]+)([^/\\]+)")


def account(r: Raw) -> str:
    """The person whose machine ran the call (the home directory its launch or working directory lies
    in), "" when neither names one."""
    for where in (r.folder, r.env):
        m = _HOME.match(where or "")
        if m:
            return m.group(1)
    return ""


def accounts_of(raws: Sequence[Raw]) -> list[str]:
    """Each call's account: its person's name where every call names a home directory and they name
    at least two people, else "" for every call (one account, as before). A call that names none (a
    drive letter on Windows, a container's /workspaces) may be anyone's, so its folder is not split:
    on Eduardodmb/ClaudeWork, sessions on a drive letter read the prefix sessions under two home
    directories had written (3 requests)."""
    names = [account(r) for r in raws]
    return names if all(names) and len(set(names)) > 1 else [""] * len(names)


def in_account(rec: Record, name: str) -> Record:
    """`rec` with its request and every call stepped with it in account `name`'s namespace."""
    from prefixsim.sources.traffic import each_call   # lazy: traffic imports the readers' records

    def moved(c):
        return replace(c, request=replace(c.request, workspace=name))

    return each_call(rec, moved)
