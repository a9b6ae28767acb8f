"""The input formats `prefixsim replay` reads, one line each: a table of their own, so that the
command's `--help` lists them without loading a reader (prefixsim.sources reads them)."""
from __future__ import annotations

FORMATS = ("claude-code", "anthropic", "openai", "deepseek", "cohere", "gemini", "bedrock", "realtime", "codex", "gemini-cli",
           "otel", "litellm", "langfuse", "opencode", "mooncake", "bailian")
#: What each format is, one line each (`prefixsim replay --source` lists them).
FORMAT_LINES = {
    "claude-code": "Claude Code transcripts (.jsonl, session, projects folder, chat.json)",
    "anthropic": "Messages API logs and cassettes (Claude API, Bedrock Invoke, Vertex)",
    "openai": "Chat Completions / Responses, any OpenAI-compatible host",
    "deepseek": "as openai, every request under DeepSeek's rules",
    "cohere": "Cohere v2 Chat logs and cassettes",
    "gemini": "generateContent logs and cassettes, cachedContents",
    "bedrock": "Bedrock Converse / ConverseStream logs and cassettes",
    "realtime": "OpenAI / Azure Realtime API WebSocket cassettes (audited by usage)",
    "codex": "Codex CLI rollouts (a rollout-*.jsonl or a sessions folder)",
    "gemini-cli": "Gemini CLI chat sessions",
    "otel": "OpenTelemetry OTLP JSON (GenAI spans, Claude Code api_request events)",
    "litellm": "LiteLLM StandardLoggingPayload JSONL",
    "langfuse": "Langfuse observation exports (GENERATIONs)",
    "opencode": "OpenCode sessions (data dir, storage, opencode.db, export, event stream)",
    "mooncake": "Mooncake engine traces",
    "bailian": "Alibaba bailian engine traces",
}
