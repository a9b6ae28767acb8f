"""Builders for small Claude Code transcripts (our own, shaped like 2.1.x and 1.0.x files)."""
import datetime as dt
import json

T0 = dt.datetime(2026, 1, 5, 10, 0, 0, tzinfo=dt.UTC)
NOTIFICATION = "<task-notification>\n<task-id>x</task-id>\n</task-notification>"


def stamp(s):
    return (T0 + dt.timedelta(seconds=s)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Transcript:
    """Appends user / assistant lines; every request is logged as two lines repeating its usage."""

    def __init__(self, session="s1", sidechain=False):
        self.lines, self.session, self.sidechain, self.n = [], session, sidechain, 0
        self.last = None

    def _uuid(self):
        self.n += 1
        return f"{self.session}-u{self.n}"

    def user(self, t, text, parent="last", sidechain=None, **extra):
        uid = self._uuid()
        self.lines.append({"parentUuid": self.last if parent == "last" else parent, "type": "user",
                           "isSidechain": self.sidechain if sidechain is None else sidechain,
                           "sessionId": self.session, "uuid": uid, "timestamp": stamp(t),
                           "message": {"role": "user", "content": text}, **extra})
        self.last = uid
        return uid

    def system(self, t, subtype, **extra):
        uid = self._uuid()
        self.lines.append({"parentUuid": self.last, "type": "system", "subtype": subtype, "isSidechain": False,
                           "sessionId": self.session, "uuid": uid, "timestamp": stamp(t), **extra})
        self.last = uid

    def call(self, t, rid, read, write, uncached=1, model="claude-opus-4-6", ttl="5m", sidechain=None,
             content=None, ttft=1.0):
        usage = {"input_tokens": uncached, "cache_creation_input_tokens": write, "cache_read_input_tokens": read,
                 "cache_creation": {"ephemeral_5m_input_tokens": write if ttl == "5m" else 0,
                                    "ephemeral_1h_input_tokens": write if ttl == "1h" else 0},
                 "output_tokens": 5}
        for k in range(2):  # two content-block lines per request, same usage: must count once
            uid = self._uuid()
            self.lines.append({"parentUuid": self.last, "type": "assistant", "requestId": rid,
                               "isSidechain": self.sidechain if sidechain is None else sidechain,
                               "sessionId": self.session, "uuid": uid, "timestamp": stamp(t + ttft + k * 0.1),
                               "message": {"id": f"msg-{rid}", "role": "assistant", "model": model,
                                           "content": content or [{"type": "text", "text": "ok"}], "usage": usage}})
            self.last = uid

    def queue(self, t, content):
        """The harness queues an injected message (a background task's notification) for later."""
        self.lines.append({"type": "queue-operation", "operation": "enqueue", "timestamp": stamp(t),
                           "sessionId": self.session, "content": content})

    def write(self, path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(x) + "\n" for x in self.lines))
        return path


def session(tmp_path, with_agent=True):
    """A 2.1.x session: 6 main requests (a TTL expiry, compaction, a re-render), a sub-agent, a compaction call."""
    m = Transcript()
    m.user(0, "hello")
    m.call(0, "r0", 0, 20000)                    # B 20,000: cold
    m.user(10, "more")
    m.call(10, "r1", 20000, 500)                 # B 20,500
    m.user(1000, "after a long pause")
    m.call(1000, "r2", 0, 20900)                 # ttl expired, B 20,900
    m.queue(1050, NOTIFICATION)                  # queued before the compaction, delivered after it
    m.system(1100, "compact_boundary", compactMetadata={"trigger": "auto", "preTokens": 21000})
    m.user(1100, "This session is being continued...", isCompactSummary=True)
    m.call(1100, "r3", 8000, 4000)               # compaction: static 8,000 read
    m.user(1110, [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "done"}])
    m.call(1110, "r4", 12000, 300)               # B 12,300
    m.user(1120, NOTIFICATION)                   # the first turn after the compaction
    m.call(1120, "r5", 8000, 4500)               # re-rendered history
    main = m.write(tmp_path / "proj" / "s1.jsonl")
    if with_agent:
        a = Transcript(sidechain=True)
        a.user(20, "explore the code")
        a.call(20, "a0", 0, 6000, model="claude-sonnet-4-5-20250929")
        a.user(25, "result")
        a.call(25, "a1", 6000, 700, model="claude-sonnet-4-5-20250929")
        a.write(tmp_path / "proj" / "s1" / "subagents" / "agent-abc.jsonl")
        c = Transcript(sidechain=True)
        c.user(1098, "Your task is to create a detailed summary")
        c.call(1098, "c0", 20900, 900)
        c.write(tmp_path / "proj" / "s1" / "subagents" / "agent-acompact-1.jsonl")
    return main


def sessions_folder(root, plan, version: str):
    """A projects folder at `root`/proj of one transcript per (session, working directory, [(t, request
    id, read, write)]) of `plan`, each call after a user turn, every line of Claude Code `version`."""
    for name, cwd, calls in plan:
        t = Transcript(session=name)
        for k, (at, rid, read, write) in enumerate(calls):
            t.user(at, f"{name} turn {k}")
            t.call(at, rid, read, write)
        for line in t.lines:
            line["version"], line["cwd"] = version, cwd
        t.write(root / "proj" / f"{name}.jsonl")
    return root / "proj"
