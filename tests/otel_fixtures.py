"""OTLP JSON exports built to the structure of the OpenTelemetry protocol's JSON encoding
(`ExportTraceServiceRequest` / `ExportLogsServiceRequest`) with the attributes OpenLLMetry,
OpenInference, the GenAI semantic conventions and Claude Code's monitoring docs name. The one real
export with cache usage found (tests/data/otel/, Claude Code under kagent) has no prompts and one
writer, so the other shapes are made here."""
import json

T0 = 1764669600 * 10**9   # 2025-12-02T10:00:00Z in nanoseconds


def kv(k, v):
    if isinstance(v, bool):
        return {"key": k, "value": {"boolValue": v}}
    if isinstance(v, int):
        return {"key": k, "value": {"intValue": str(v)}}   # int64 is a decimal string in OTLP JSON
    if isinstance(v, float):
        return {"key": k, "value": {"doubleValue": v}}
    return {"key": k, "value": {"stringValue": v}}


def span(i, attrs, seconds=0, trace="a" * 32):
    t = T0 + seconds * 10**9
    return {"traceId": trace, "spanId": f"{i:016x}", "name": "chat", "kind": 3, "startTimeUnixNano": str(t),
            "endTimeUnixNano": str(t + 2 * 10**9), "attributes": [kv(k, v) for k, v in attrs.items()]}


def traces(spans, resource=None):
    return {"resourceSpans": [{"resource": {"attributes": [kv(k, v) for k, v in (resource or {"service.name": "app"}).items()]},
                               "scopeSpans": [{"scope": {"name": "opentelemetry.instrumentation.anthropic"},
                                               "spans": spans}]}]}


def openllmetry(i, seconds, prompt, read, write, output=100, model="claude-sonnet-4-20250514", messages=None,
                session=None):
    """An OpenLLMetry Anthropic span: input_tokens counts the cached tokens too (the conventions' rule)."""
    a = {"gen_ai.system": "anthropic", "gen_ai.request.model": model, "gen_ai.response.model": model,
         "gen_ai.usage.input_tokens": prompt, "gen_ai.usage.output_tokens": output,
         "gen_ai.usage.cache_read_input_tokens": read, "gen_ai.usage.cache_creation_input_tokens": write}
    if session:
        a["session.id"] = session
    for n, m in enumerate(messages or ()):
        a[f"gen_ai.prompt.{n}.role"] = m["role"]
        a[f"gen_ai.prompt.{n}.content"] = m["content"]
    return span(i, a, seconds)


def api_request(session, seconds, uncached, read, write, output=50, model="claude-sonnet-4-5-20250929", seq=0):
    """A Claude Code `claude_code.api_request` log record (its counts written as text, as Claude Code does)."""
    t = T0 + seconds * 10**9
    attrs = {"event.name": "api_request", "event.timestamp": f"2025-12-02T10:{seconds // 60:02d}:{seconds % 60:02d}.000Z",
             "event.sequence": seq, "session.id": session, "model": model, "input_tokens": str(uncached),
             "output_tokens": str(output), "cache_read_tokens": str(read), "cache_creation_tokens": str(write),
             "cost_usd": "0.01", "duration_ms": "2100"}
    return {"timeUnixNano": str(t), "observedTimeUnixNano": str(t), "body": {"stringValue": "claude_code.api_request"},
            "attributes": [kv(k, v) for k, v in attrs.items()]}


def logs(records):
    return {"resourceLogs": [{"resource": {"attributes": [kv("service.name", "claude-code")]},
                              "scopeLogs": [{"scope": {"name": "com.anthropic.claude_code.events"},
                                             "logRecords": records}]}]}


def lines(*docs):
    return "".join(json.dumps(d) + "\n" for d in docs)
