"""LiteLLM `StandardLoggingPayload` lines and Langfuse observations, built to the fields of
BerriAI/litellm `litellm/types/utils.py` and Langfuse's observations API: no public log with cache
usage was found, so the samples are made here."""
import json

START = 1764669600.0   # 2025-12-02T10:00:00Z

SYSTEM = {"role": "system", "content": "You are a careful assistant. " * 200}


def litellm(i, seconds, prompt, read, write, output=40, messages=None, model="claude-sonnet-4-20250514",
            provider="anthropic", trace="t1", **extra):
    """One payload: prompt_tokens counts the cached tokens (LiteLLM's OpenAI-shaped usage)."""
    usage = {"prompt_tokens": prompt, "completion_tokens": output, "total_tokens": prompt + output,
             "cache_read_input_tokens": read, "cache_creation_input_tokens": write,
             "prompt_tokens_details": {"cached_tokens": read}}
    p = {"id": f"chatcmpl-{i}", "trace_id": trace, "call_type": "acompletion", "stream": False,
         "response_cost": 0.01, "status": "success", "custom_llm_provider": provider, "total_tokens": prompt + output,
         "prompt_tokens": prompt, "completion_tokens": output, "startTime": START + seconds,
         "endTime": START + seconds + 2, "completionStartTime": START + seconds + 1, "model": model,
         "model_group": model, "api_base": "https://api.anthropic.com/v1/messages",
         "metadata": {"usage_object": usage, "user_api_key_hash": "h"}, "cache_hit": None,
         "messages": messages, "response": {"choices": [{"message": {"role": "assistant", "content": "ok"}}]},
         "model_parameters": {}}
    p.update(extra)
    return p


def generation(i, seconds, uncached, read, output=30, messages=None, model="gpt-4o-2024-08-06", trace="tr1",
               session=None):
    """One Langfuse GENERATION: usageDetails keys sum to total (`input` is the uncached part)."""
    o = {"id": f"obs-{i}", "traceId": trace, "type": "GENERATION", "name": "chat",
         "startTime": f"2025-12-02T10:{seconds // 60:02d}:{seconds % 60:02d}.000Z",
         "endTime": f"2025-12-02T10:{seconds // 60:02d}:{seconds % 60:02d}.900Z", "model": model,
         "input": messages, "output": {"role": "assistant", "content": "ok"},
         "usageDetails": {"input": uncached, "input_cached_tokens": read, "output": output,
                          "total": uncached + read + output}}
    if session:
        o["sessionId"] = session
    return o


def lines(*objs):
    return "".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objs)
