"""Issue 14: replay reconstruction of Claude Code transcripts and API logs, each mechanism on a small
fixture built here (numbers follow from the rule, not from a run)."""
from cc_fixtures import NOTIFICATION, Transcript, stamp

from prefixsim.replay import replay
from prefixsim.sources import load


def _progress(t, s):
    """A `progress` record (a hook's output) chained after the last line, as 2.1.x writes them."""
    uid = t._uuid()
    t.lines.append({"parentUuid": t.last, "type": "progress", "uuid": uid, "timestamp": stamp(s),
                    "sessionId": t.session, "isSidechain": False, "data": {"type": "hook_progress"}})
    t.last = uid


def test_a_notification_after_a_turn_continues_through_system_records(tmp_path):
    t = Transcript()
    t.user(0, "run the tests in the background")
    t.call(0, "r0", 0, 20000)                       # B 20,000
    _progress(t, 2)
    t.system(2, "stop_hook_summary")
    t.system(2, "turn_duration")
    t.user(60, NOTIFICATION)                        # parent: turn_duration -> stop_hook -> progress -> r0
    t.call(60, "r1", 20000, 300)                    # the API read the whole conversation
    rows = {r.request_id: r for r in replay(load(t.write(tmp_path / "s.jsonl"), False)).rows}
    assert rows["r1"].predicted.cache_read == 20000 and rows["r1"].cause.kind == ""
    assert rows["r1"].predicted.cache_creation == 300


def test_a_message_whose_chain_reaches_no_message_starts_a_new_history(tmp_path):
    t = Transcript()
    t.user(0, "first")
    t.call(0, "r0", 0, 20000)
    t.user(30, "second")
    t.call(30, "r1", 20000, 500)                    # B 20,500
    t.system(40, "local_command")
    t.lines[-1]["parentUuid"] = None                # a record that starts a chain of its own
    t.user(50, "a new conversation")                # parent: that record, which reaches no message
    t.call(50, "r2", 15000, 6000)                   # B 21,000: larger, yet not a continuation
    recs = {r.request_id: r for r in load(t.write(tmp_path / "s.jsonl"), False)}
    # a new history keeps only the static prefix: the history block of r1 is not carried
    assert recs["r2"].call.request.blocks[2].data != recs["r1"].call.request.blocks[2].data


def _tool_result_logged_first(t, s, call_uuid):
    """A tool result written before the response line that called it (2.1.x, parallel tool calls): its
    parent is `call_uuid`, a line further down."""
    uid = t._uuid()
    t.lines.append({"parentUuid": call_uuid, "type": "user", "isSidechain": False, "sessionId": t.session,
                    "uuid": uid, "timestamp": stamp(s),
                    "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                                             "content": "ok"}]}})
    return uid


def test_a_tool_result_logged_before_its_call_continues_the_conversation(tmp_path):
    # issue 30: 133 of 134 such results in four public 2.1.x sources (2.1.97-2.1.146) were followed by a
    # read of the whole previous prompt; the chain named a line logged after the result, and was taken
    # for one that reaches no message (a new history: only the static prefix, 16,113 of 55,956 read)
    t = Transcript()
    t.user(0, "first")
    t.call(0, "r0", 0, 20000)
    t.user(10, "edit the file")
    t.call(10, "r1", 20000, 500)                    # B 20,500; its lines go on below
    call, usage = "s1-tool-call", t.lines[-1]["message"]["usage"]
    result = _tool_result_logged_first(t, 12, call)
    t.lines.append({"parentUuid": t.last, "type": "assistant", "requestId": "r1", "isSidechain": False,
                    "sessionId": t.session, "uuid": call, "timestamp": stamp(11.9),
                    "message": {"id": "msg-r1", "role": "assistant", "model": "claude-opus-4-6",
                                "content": [{"type": "tool_use", "id": "toolu_1", "name": "Edit", "input": {}}],
                                "usage": usage}})
    t.last = result
    t.call(13, "r2", 20500, 300)                    # the API read the whole conversation
    rows = {r.request_id: r for r in replay(load(t.write(tmp_path / "s.jsonl"), False)).rows}
    assert (rows["r2"].predicted.cache_read, rows["r2"].predicted.cache_creation) == (20500, 300)
    assert rows["r2"].cause.kind == ""


def test_a_chain_naming_a_line_never_logged_starts_a_new_history(tmp_path):
    # the decision waits for the next request only: a parent still unknown by then reaches no message
    t = Transcript()
    t.user(0, "first")
    t.call(0, "r0", 0, 20000)
    t.user(10, "second")
    t.call(10, "r1", 20000, 500)
    t.last = _tool_result_logged_first(t, 12, "s1-nowhere")
    t.call(13, "r2", 15000, 5800)
    recs = {r.request_id: r for r in load(t.write(tmp_path / "s.jsonl"), False)}
    assert recs["r2"].call.request.blocks[2].data != recs["r1"].call.request.blocks[2].data


def test_a_notification_queued_before_a_compaction_comes_with_a_rerender(tmp_path):
    t = Transcript()
    t.user(0, "start")
    t.call(0, "r0", 0, 20000)
    t.queue(10, NOTIFICATION)
    t.system(20, "compact_boundary")
    t.user(20, "This session is being continued...", isCompactSummary=True)
    t.call(20, "r1", 8000, 4000)
    t.user(30, NOTIFICATION)
    t.call(30, "r2", 8000, 4300)
    recs = {r.request_id: r for r in load(t.write(tmp_path / "s.jsonl"), False)}
    assert recs["r2"].call.request.blocks[2].data != recs["r1"].call.request.blocks[2].data


def test_only_the_first_turn_after_a_compaction_comes_with_a_rerender(tmp_path):
    # issue 30: of notifications queued before a compaction, 3 of the 4 delivered as the first turn
    # after it read only the static prefix; all 7 delivered later read the conversation
    t = Transcript()
    t.user(0, "start")
    t.call(0, "r0", 0, 20000)
    t.queue(10, NOTIFICATION)
    t.queue(11, NOTIFICATION.replace("x", "y"))
    t.system(20, "compact_boundary")
    t.user(20, "This session is being continued...", isCompactSummary=True)
    t.call(20, "r1", 8000, 4000)
    t.user(30, NOTIFICATION)
    t.call(30, "r2", 8000, 4300)                    # re-rendered: only the static prefix
    t.user(40, NOTIFICATION.replace("x", "y"))
    t.call(40, "r3", 12300, 200)                    # continues r2's history
    recs = {r.request_id: r for r in load(t.write(tmp_path / "s.jsonl"), False)}
    assert recs["r2"].call.request.blocks[2].data != recs["r1"].call.request.blocks[2].data
    assert recs["r3"].call.request.blocks[2].data == recs["r2"].call.request.blocks[2].data


def _folder_sessions(tmp_path):
    """Sessions of one harness version and model, each starting within 5 minutes of the last request
    of the one before. Every first request reads 5,000 of its static prefix: the cross-session prefix.
    a's read shows that size only once a0 is logged; b, started after, writes the prefix as an entry of
    its own; c reads it. a2 (after an expiry) reads a's whole system entry, 9,000; d starts after that."""
    a = Transcript(session="a")
    a.user(0, "hi")
    a.call(0, "a0", 5000, 15000)                   # B 20,000
    a.user(10, "more")
    a.call(10, "a1", 20000, 400)                   # B 20,400
    a.user(1000, "after a pause")
    a.call(1000, "a2", 9000, 11800)                # expired: its own system entry (9,000) was read
    b = Transcript(session="b")
    b.user(70, "hello")
    b.call(70, "b0", 5000, 16000)
    c = Transcript(session="c")
    c.user(130, "good morning")
    c.call(130, "c0", 5000, 15500)
    d = Transcript(session="d")
    d.user(1100, "evening")
    d.call(1100, "d0", 0, 30000)
    for t in (a, b, c, d):
        for line in t.lines:
            line["version"] = "2.1.38"
        t.write(tmp_path / "proj" / f"{t.session}.jsonl")
    return tmp_path / "proj"


def test_sessions_of_a_folder_share_the_cross_session_prefix(tmp_path):
    rows = {r.request_id: r for r in replay(load(_folder_sessions(tmp_path), False)).rows}
    # a wrote its static prefix before its size was known, as one entry of its own: nothing for b
    assert rows["b0"].predicted.cache_read == 0
    # b started knowing it (from a0): its 5,000-token cross-session entry is what c0 reads
    assert rows["c0"].predicted.cache_read == 5000 and rows["c0"].predicted.cache_creation == 15500
    # on its own, c's first request has nothing to read
    alone = replay(load(tmp_path / "proj" / "c.jsonl", False)).rows[0]
    assert alone.predicted.cache_read == 0


def test_the_system_entry_is_learned_from_earlier_reads_only(tmp_path):
    recs = {r.request_id: r for r in load(_folder_sessions(tmp_path), False)}
    def static(rid):
        return [b.tokens for b in recs[rid].call.request.blocks[:2]]

    assert static("b0")[0] == 5000 and static("c0")[0] == 5000    # the cross-session prefix, from a0
    # a2's read (9,000: 5,000 shared and 4,000 of a's own) is logged at 1,001 s: d, starting after,
    # takes its own part as large as a's; b and c, earlier, could not
    assert static("d0") == [5000, 4000]
    assert static("c0")[1] != 4000


def _warmups(tmp_path):
    """Claude Code's sub-agent `Warmup`: sessions whose first request is the same bytes throughout.
    a's writes all 6,000 tokens; b's, a minute later, reads all of them from a's (nothing written);
    c's and e's, after b0 is logged, are the same request again; f's is 10 tokens longer. d starts
    with another message."""
    out = {}
    for name, t, text, read, write in (("a", 0, "Warmup", 0, 6000), ("b", 60, "Warmup", 6000, 0),
                                       ("c", 120, "Warmup", 6000, 0), ("e", 150, "Warmup", 6000, 0),
                                       ("f", 160, "Warmup", 0, 6010),
                                       ("d", 180, "review the parser changes please", 5995, 210)):
        s = Transcript(session=name, sidechain=True)
        s.user(t, text)
        s.call(t, f"{name}0", read, write, uncached=3, model="claude-haiku-4-5")
        for line in s.lines:
            line["version"] = "2.0.22"
        out[name] = s.write(tmp_path / "proj" / f"{name}.jsonl")
    return tmp_path / "proj"


def test_a_first_request_read_whole_from_another_session_teaches_the_whole_prompt(tmp_path):
    rows = {r.request_id: r for r in replay(load(_warmups(tmp_path))).rows}
    # b read a's whole prompt: c, the same first message after b0 is logged, writes all of it as an
    # entry named by that message (a wrote it before anything was known, as an entry of its own) and
    # e reads it
    assert (rows["c0"].predicted.cache_read, rows["c0"].predicted.cache_creation) == (0, 6000)
    assert (rows["e0"].predicted.cache_read, rows["e0"].predicted.cache_creation) == (6000, 0)
    assert rows["e0"].predicted.input_tokens == 3
    # d's message differs: where the cross-session prefix ends inside b's prompt, no read showed
    assert (rows["d0"].predicted.cache_read, rows["d0"].predicted.cache_creation) == (0, 6205)
    # and a warmup of another size is not the same bytes (its environment changed)
    assert (rows["f0"].predicted.cache_read, rows["f0"].predicted.cache_creation) == (0, 6010)
    # b itself could know nothing of a's size: it is predicted to write
    assert rows["b0"].predicted.cache_read == 0


# --- Bedrock and Vertex AI recordings ----------------------------------------------------------

def _cloud_body(text):
    return {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 10,
            "system": [{"type": "text", "text": "You answer in one word. " * 400,
                        "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": text}]}


def test_a_bedrock_cassette_is_read_with_the_model_of_its_url(tmp_path):
    import json

    url = ("https://bedrock-runtime.us-east-1.amazonaws.com/model/"
           "us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke")
    usage = [{"input_tokens": 5, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 0,
              "output_tokens": 1},
             {"input_tokens": 6, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 2000,
              "output_tokens": 1}]
    inters = []
    for k, u in enumerate(usage):
        inters.append({"request": {"method": "POST", "uri": url, "body": json.dumps(_cloud_body(f"q{k}"))},
                       "response": {"status": {"code": 200},
                                    "body": {"string": json.dumps({"type": "message", "usage": u})}}})
    from ruamel.yaml import YAML

    path = tmp_path / "bedrock.yaml"
    with path.open("w") as fh:
        YAML(typ="safe", pure=True).dump({"interactions": inters, "version": 1}, fh)
    recs = load(path)
    assert [r.call.request.model for r in recs] == ["claude-sonnet-4-5"] * 2
    a, b = replay(recs).rows
    # the system prompt is measured by scaling cl100k counts to the observed totals: within 1 %
    assert a.predicted.cache_read == 0 and abs(b.predicted.cache_read - 2000) <= 20


def test_a_vertex_jsonl_log_is_read_with_the_model_of_its_url(tmp_path):
    import json

    url = ("https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/publishers/"
           "anthropic/models/claude-sonnet-4-5@20250929:rawPredict")
    lines = [{"url": url, "request": _cloud_body("hi"),
              "response": {"usage": {"input_tokens": 4, "cache_creation_input_tokens": 2100,
                                     "cache_read_input_tokens": 0, "output_tokens": 1}}}]
    path = tmp_path / "vertex.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    recs = load(path)
    assert len(recs) == 1 and recs[0].call.request.model == "claude-sonnet-4-5"


def test_cloud_model_ids_map_to_the_anthropic_ids():
    from prefixsim.providers.tables import canonical_model

    assert canonical_model("anthropic.claude-sonnet-4-5-20250929-v1:0") == "claude-sonnet-4-5"
    assert canonical_model("global.anthropic.claude-opus-4-6-v1:0") == "claude-opus-4-6"
    assert canonical_model("claude-sonnet-4-5@20250929") == "claude-sonnet-4-5"


# --- API logs: one prefix one size; the prompt's closing tokens -----------------------------------

def _log(tmp_path, entries):
    import json

    path = tmp_path / "calls.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


def _usage(read, write, uncached):
    return {"input_tokens": uncached, "cache_creation_input_tokens": write, "cache_read_input_tokens": read,
            "output_tokens": 1}


SYSTEM = [{"type": "text", "text": "You answer in one word. " * 300, "cache_control": {"type": "ephemeral"}}]


def test_the_same_bytes_have_the_same_size_in_every_request(tmp_path):
    first = {"model": "claude-sonnet-4-5", "max_tokens": 5, "system": SYSTEM,
             "messages": [{"role": "user", "content": "word " * 100}]}
    second = {**first, "messages": [*first["messages"], {"role": "assistant", "content": "ok"},
                                    {"role": "user", "content": "1234567 " * 300}]}
    # the second prompt's new text is scaled very differently from the first's (observed totals)
    path = _log(tmp_path, [{"request": first, "response": {"usage": _usage(0, 2500, 120)}},
                           {"request": second, "response": {"usage": _usage(2500, 0, 2600)}}])
    recs = load(path)
    sizes = [r.call.request.blocks[0].tokens for r in recs]
    assert sizes[0] == sizes[1]                       # the system prompt: one size
    assert sum(b.tokens for b in recs[1].call.request.blocks) == 2500 + 2600   # the new blocks take the rest
    a, b = replay(recs).rows
    assert b.predicted.cache_read == a.predicted.cache_creation


def test_the_tokens_closing_the_prompt_stay_uncached(tmp_path):
    # automatic caching: the breakpoint is on the last block; the API still reports 3 uncached tokens
    first = {"model": "claude-sonnet-4-5", "max_tokens": 5, "system": "Be brief.",
             "cache_control": {"type": "ephemeral"},
             "messages": [{"role": "user", "content": "Explain Python. " * 200}]}
    second = {**first, "messages": [*first["messages"], {"role": "assistant", "content": "A language. " * 20},
                                    {"role": "user", "content": "Shorter?"}]}
    path = _log(tmp_path, [{"request": first, "response": {"usage": _usage(0, 1200, 3)}},
                           {"request": second, "response": {"usage": _usage(1200, 80, 3)}}])
    a, b = replay(load(path)).rows
    assert (a.predicted.input_tokens, a.predicted.cache_creation) == (3, 1200)
    assert (b.predicted.cache_read, b.predicted.cache_creation, b.predicted.input_tokens) == (1200, 80, 3)


# --- server tools: several model iterations under one usage ---------------------------------------

def test_a_web_search_request_is_two_iterations_under_one_usage(tmp_path):
    body = {"model": "claude-sonnet-4-5", "max_tokens": 200, "system": SYSTEM,
            "tools": [{"type": "web_search_20250305", "name": "web_search"}],
            "messages": [{"role": "user", "content": "What is the weather in Paris today?"}]}
    result = [{"type": "web_search_result", "url": "https://example.org", "title": "Paris weather",
               "encrypted_content": "sunny and mild " * 150}]
    content = [{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "Paris weather"}},
               {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": result},
               {"type": "text", "text": "Sunny."}]
    # Observed usage as the rule gives it for blocks of their cl100k size (so scaling changes nothing):
    # iteration 1 writes tools + system prompt (its breakpoint) and sends the question uncached;
    # iteration 2 reads them and writes up to the search result (the API's automatic 5m breakpoint).
    from prefixsim.core.tokens import get_tokenizer
    from prefixsim.wire.anthropic import render_anthropic

    count = get_tokenizer("cl100k_base").count_text
    first = [count(b.data.decode()) for b in render_anthropic(body).blocks]
    body2 = {**body, "messages": [*body["messages"], {"role": "assistant", "content": content[:2]}]}
    second_counts = [count(b.data.decode()) for b in render_anthropic(body2).blocks]
    static, rest = sum(first[:2]), sum(second_counts[2:])
    usage = {"input_tokens": sum(first[2:]), "cache_creation_input_tokens": static + rest,
             "cache_read_input_tokens": static, "output_tokens": 40}
    path = _log(tmp_path, [{"request": body, "response": {"content": content, "usage": usage}}])
    rec = load(path)[0]
    assert len(rec.iterations) == 1
    second = rec.iterations[0].request
    assert second.blocks[-1].breakpoint == "5m" and b"web_search_tool_result" in second.blocks[-1].data
    system = sum(b.tokens for b in rec.call.request.blocks[:2])    # the tools, then the system prompt
    assert sum(b.tokens for b in second.blocks[:2]) == system      # one prefix, one size across iterations
    row = replay([rec]).rows[0]
    assert row.predicted.cache_read == system            # iteration 2 reads what iteration 1 wrote
    def sizes(r):
        return sum(b.tokens for b in r.blocks)

    assert row.predicted.prompt_tokens == sizes(rec.call.request) + sizes(second)
    assert (row.predicted.cache_read, row.predicted.cache_creation, row.predicted.input_tokens) == \
        (row.observed.cache_read, row.observed.cache_creation, row.observed.input_tokens)
    assert row.predicted.cache_write_5m == row.predicted.cache_creation


def test_a_response_that_pauses_after_a_result_ran_no_more_iterations():
    from prefixsim.sources.anthropic_log import server_iterations

    body = {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "q"}]}
    use = {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}
    res = {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []}
    assert len(server_iterations(body, [use, res, {"type": "text", "text": "a"}])) == 1
    assert server_iterations(body, [use, res]) == []                       # pause_turn
    assert len(server_iterations(body, [use, res, use, res, {"type": "text", "text": "b"}])) == 2
    assert server_iterations(body, [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]) == []


def test_an_mcp_reconnect_comes_with_a_rerender(tmp_path):
    t = Transcript()
    t.user(0, "start the server")
    t.call(0, "r0", 0, 20000)
    t.user(30, "<command-name>/mcp</command-name>")
    t.user(31, "<local-command-stdout>Reconnected to tidewave.</local-command-stdout>")
    t.user(40, "does scrolling work now?")
    t.call(40, "r1", 15000, 5400)
    recs = {r.request_id: r for r in load(t.write(tmp_path / "s.jsonl"), False)}
    assert recs["r1"].call.request.blocks[2].data != recs["r0"].call.request.blocks[2].data


def test_records_without_an_api_call_are_never_skipped_for_their_timestamps(tmp_path):
    from prefixsim.sources.problems import collecting

    t = Transcript()
    t.user(0, "hi")
    t.call(0, "r0", 0, 20000)
    t.lines.append({"type": "queue-operation", "operation": "enqueue", "timestamp": "not a time",
                    "sessionId": "s1", "content": NOTIFICATION})
    t.system(20, "compact_boundary")
    t.lines[-1]["timestamp"] = None
    t.user(30, NOTIFICATION)
    t.call(30, "r1", 8000, 12300)
    with collecting(strict=True) as found:
        recs = load(t.write(tmp_path / "s.jsonl"), False)
    assert [r.request_id for r in recs] == ["r0", "r1"] and not found.skipped


def test_a_response_whose_blocks_cannot_be_rendered_is_one_iteration(tmp_path):
    body = {"model": "claude-sonnet-4-5", "max_tokens": 5, "system": SYSTEM,
            "messages": [{"role": "user", "content": "q"}]}
    content = [42, {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []},
               {"type": "text", "text": "a"}]
    path = _log(tmp_path, [{"request": body, "response": {"content": content, "usage": _usage(0, 2000, 5)}}])
    recs = load(path)
    assert len(recs) == 1


def test_a_chain_through_a_tool_calls_progress_continues_the_conversation(tmp_path):
    # issue 30: a tool call's progress (a sub-agent's, a hook's) is a chain of its own hanging off the
    # line that made the call; the turn's stop_hook_summary follows its last record and the next typed
    # message follows that. Taken for a rewind to the call's request, the next prompt read only that
    # request's history (Xu-Wentao/dotfile 5abbc087 line 82, 2.1.78: 17,689 predicted, 29,754 read)
    t = Transcript()
    t.user(0, "explore the code with an agent")
    t.call(0, "r0", 0, 20000)
    call = t.last                                   # the line that made the tool call
    t.user(30, [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "the agent's report"}])
    t.call(30, "r1", 20000, 3000)                   # B 23,000: the turn's last request
    parent = call
    for k in range(3):                              # the agent's progress, under the call's line
        uid = f"progress-{k}"
        t.lines.append({"parentUuid": parent, "type": "progress", "isSidechain": False, "sessionId": t.session,
                        "uuid": uid, "timestamp": stamp(5 + k), "data": {"type": "agent_progress"}})
        parent = uid
    t.last = parent
    t.system(40, "stop_hook_summary")
    t.user(60, "now write it up")
    t.call(60, "r2", 23000, 400)                    # the API read the whole conversation
    rows = {r.request_id: r for r in replay(load(t.write(tmp_path / "s.jsonl"), False)).rows}
    assert (rows["r2"].predicted.cache_read, rows["r2"].predicted.cache_creation) == (23000, 400)
    assert rows["r2"].cause.kind == ""
