"""Issue 32: cassettes in shapes real test suites record, each of which replayed nothing before ("no
requests found"): an Azure OpenAI stream whose first chunk names no model, a Gemini request sending one
Tool bare (not in a list), and a cassette that records calls to two APIs."""
import json

from ruamel.yaml import YAML

from prefixsim.replay import replay
from prefixsim.sources import load

_AZURE = "https://res.openai.azure.com/openai/deployments/mini/chat/completions?api-version=2024-12-01-preview"
_GEMINI = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"


def _inter(uri, body, response, sse=False):
    text = response if sse else json.dumps(response)
    return {"request": {"method": "POST", "uri": uri, "body": json.dumps(body)},
            "response": {"status": {"code": 200}, "body": {"string": text}}}


def _write(path, inters):
    with path.open("w") as fh:
        YAML(typ="safe", pure=True).dump({"interactions": inters, "version": 1}, fh)
    return path


def _azure_stream(prompt_tokens):
    # Azure opens every stream with a content-filter chunk whose id and model are empty
    chunks = [{"choices": [], "created": 0, "id": "", "model": "", "prompt_filter_results": []},
              {"choices": [{"delta": {"content": "Hello"}, "index": 0}], "created": 1769122116, "id": "chatcmpl-1",
               "model": "gpt-4o-mini-2024-07-18", "usage": None},
              {"choices": [], "created": 1769122116, "id": "chatcmpl-1", "model": "gpt-4o-mini-2024-07-18",
               "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 2,
                         "prompt_tokens_details": {"cached_tokens": 0}}}]
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def test_an_azure_stream_takes_its_model_from_the_first_chunk_that_names_one(tmp_path):
    # the old code kept the empty model of the content-filter chunk: "request has no 'model'"
    body = {"messages": [{"role": "user", "content": "Say hello"}], "stream": True,
            "stream_options": {"include_usage": True}}
    path = _write(tmp_path / "azure.yaml", [_inter(_AZURE, body, _azure_stream(9), sse=True)])
    (rec,) = load(path)
    assert rec.call.request.model == "gpt-4o-mini-2024-07-18" and rec.provider == "openai"
    assert rec.observed.prompt_tokens == 9


def _gemini(tools, prompt_tokens):
    body = {"contents": [{"role": "user", "parts": [{"text": "What is the capital of France?"}]}], "tools": tools}
    resp = {"candidates": [{"content": {"role": "model", "parts": [{"text": "Paris"}]}}],
            "usageMetadata": {"promptTokenCount": prompt_tokens, "candidatesTokenCount": 1}}
    return _inter(_GEMINI, body, resp)


_TOOL = {"function_declarations": [{"name": "get_capital", "description": "Get the capital of a country.",
                                    "parameters": {"type": "object", "properties": {"country": {"type": "string"}}}}]}


def test_a_gemini_tool_sent_bare_is_one_tool(tmp_path):
    # the old code skipped the call: "tools is not a list: an object"
    bare = load(_write(tmp_path / "bare.yaml", [_gemini(_TOOL, 40)]))
    listed = load(_write(tmp_path / "listed.yaml", [_gemini([_TOOL], 40)]))
    assert len(bare) == 1 and [b.data for b in bare[0].call.request.blocks] == \
        [b.data for b in listed[0].call.request.blocks]


def test_a_cassette_of_two_apis_replays_the_calls_of_both(tmp_path):
    # the old code read only the calls of the first API it recognised (Gemini), 2 of 4
    chat = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "What is the capital of France?"}]}
    answer = {"id": "c", "model": "gpt-4o-mini-2024-07-18", "created": 1742842885,
              "choices": [{"index": 0, "message": {"role": "assistant", "content": "Paris"}}],
              "usage": {"prompt_tokens": 20, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": 0}}}
    path = _write(tmp_path / "both.yaml", [_gemini([_TOOL], 40), _gemini([_TOOL], 41),
                                           _inter("https://api.openai.com/v1/chat/completions", chat, answer),
                                           _inter("https://api.openai.com/v1/chat/completions", chat, answer)])
    recs = load(path)
    assert sorted(r.provider for r in recs) == ["gemini", "gemini", "openai", "openai"]
    assert len(replay(recs).rows) == 4
