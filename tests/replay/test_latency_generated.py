"""What a response had generated when the line that times it was written: Claude Code writes a line per
content block once the block is complete, so the first line's blocks (and every block before the
earliest-stamped line) sit in the measured time; a thinking block logged without its text leaves it unknown."""
import json

from cc_fixtures import stamp
from prefixsim.commands.common import read_traffic

USAGE = {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 50}
TEXT = "Here is the plan, in three steps, before I run anything at all."
TOOL = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls -la /tmp"}}


def _lines(tmp_path):
    lines, n = [], 0

    def add(kind, t, content, rid=None, parent=None):
        nonlocal n
        n += 1
        line = {"parentUuid": parent, "type": kind, "isSidechain": False, "sessionId": "s1", "uuid": f"u{n}",
                "timestamp": stamp(t), "message": {"role": kind, "content": content}}
        if rid:
            line["requestId"] = rid
            line["message"].update(id=f"msg-{rid}", model="claude-opus-4-6", usage=USAGE)
        lines.append(line)
        return f"u{n}"

    u = add("user", 0, "hello")
    # r1: its text line at 3.0 s, then its tool call's line stamped earlier (2.5 s): the response began by
    # 2.5 s, and by then both blocks were generated
    a = add("assistant", 3.0, [{"type": "text", "text": TEXT}], "r1", u)
    a = add("assistant", 2.5, [TOOL], "r1", a)
    u = add("user", 10, [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}], parent=a)
    # r2: one text line, then a later one: only the first is in the measured time
    a = add("assistant", 12.0, [{"type": "text", "text": TEXT}], "r2", u)
    a = add("assistant", 15.0, [TOOL], "r2", a)
    u = add("user", 20, "and now?", parent=a)
    # r3: a thinking block logged without its text: what was generated is not shown
    add("assistant", 25.0, [{"type": "thinking", "thinking": "", "signature": "abc"}], "r3", u)
    path = tmp_path / "s1.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_each_request_carries_what_it_generated_before_its_earliest_line(tmp_path):
    records, _ = read_traffic([str(_lines(tmp_path))], None, False, partial=True)
    got = {r.request_id: (round(r.call.ttft, 3), r.generated) for r in records}
    tool = len('Bash{"command":"ls -la /tmp"}')   # a tool call's name and arguments, in characters
    assert got == {"r1": (2.5, len(TEXT) + tool), "r2": (2.0, len(TEXT)), "r3": (5.0, None)}
