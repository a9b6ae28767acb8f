"""What reading one transcript tells the user about the file, gathered while it is read and said once
at its end: requests another transcript gave already, lines of types prefixsim does not know, and
turns replayed under a version rule no public transcript confirms."""
from __future__ import annotations

from dataclasses import dataclass, field

from prefixsim.sources import problems
from prefixsim.sources.claude_code.versions import KEEPS_EARLIER_THINKING, LAST_DROPPING_THINKING, uncertain_thinking


def _v(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


@dataclass
class FileNotes:
    repeated: dict[str, int] = field(default_factory=dict)         # request id another transcript gave -> first line
    unknown: dict[str, list[int]] = field(default_factory=dict)    # record type -> [first line, count]
    #: version -> [first line, count] of new user turns replayed without the earlier turns' thinking
    #: in the versions no public transcript shows (versions.uncertain_thinking)
    unsure_thinking: dict[str, list[int]] = field(default_factory=dict)

    def repeat(self, rid: str, line: int) -> None:
        self.repeated.setdefault(rid, line)

    def unknown_type(self, typ: str, line: int) -> None:
        self.unknown.setdefault(typ, [line, 0])[1] += 1

    def dropped_thinking(self, version: str, line: int, dropped: object) -> None:
        if dropped and uncertain_thinking(version):
            self.unsure_thinking.setdefault(version, [line, 0])[1] += 1

    def say(self, where: str) -> None:
        if self.repeated:
            k = len(self.repeated)
            problems.note(where, min(self.repeated.values()), f"{k} request{'s' if k > 1 else ''} already read from "
                                                              "another transcript (the same requestId): counted once")
        for typ, (first, count) in sorted(self.unknown.items(), key=lambda kv: kv[1][0]):
            problems.note(where, first, f"ignored {count} line{'s' if count > 1 else ''} of unknown type {typ!r} "
                                        "(no API call in them as far as prefixsim knows)")
        for version, (first, count) in sorted(self.unsure_thinking.items(), key=lambda kv: kv[1][0]):
            problems.note(where, first, f"{count} new user turn{'s' if count > 1 else ''} of Claude Code {version} "
                                        "replayed without the earlier turns' thinking, as the API default drops it: "
                                        f"unconfirmed (no public transcript between {_v(LAST_DROPPING_THINKING)} and "
                                        f"{_v(KEEPS_EARLIER_THINKING)} shows whether the harness kept it; "
                                        f"{_v(LAST_DROPPING_THINKING)} and earlier drop it, {_v(KEEPS_EARLIER_THINKING)} "
                                        "and later keep it; docs/rules.md#claude-code-harness)")
