"""What the local server does as vLLM 0.32 does, where the form of a reply or a refusal is vLLM's own
(``tests/data/vllm``, recorded from a real server, holds it to them): the requests it refuses before
any model runs, and its /metrics text."""

from __future__ import annotations

from typing import Any

from runners.fake_llm.wire import Refused

_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}


def schema_error(schema: Any) -> str | None:
    """Why a reply schema cannot become a grammar (vLLM's wording), or None: the checks of its
    structure that vLLM's grammar compiler makes first."""
    if isinstance(schema, bool):
        return None
    if not isinstance(schema, dict):
        return "schema must be an object or a boolean"
    kind = schema.get("type")
    for one in kind if isinstance(kind, list) else [kind] if kind is not None else []:
        if one not in _TYPES:
            return f"unknown type {one!r}"
    properties = schema.get("properties")
    if properties is not None and not isinstance(properties, dict):
        return "properties must be an object"
    required = schema.get("required")
    if required is not None and not (isinstance(required, list) and all(isinstance(r, str) for r in required)):
        return "required must be an array of strings"
    parts = [*(properties or {}).values()]
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            parts.append(schema[key])
    for key in ("anyOf", "oneOf", "allOf"):
        parts.extend(schema.get(key) or [])
    return next((error for part in parts if (error := schema_error(part)) is not None), None)


def refuse_as_vllm(body: dict, prompt_tokens: int, max_tokens: int, max_model_len: int) -> None:
    """Raise the 400 vLLM answers a request with before it runs: ``max_tokens`` over the context, a
    prompt over it, a reply schema that is no grammar. A prompt and ``max_tokens`` that together pass
    the context are served, the reply cut to fit, as vLLM does."""
    if max_tokens > max_model_len:
        raise Refused(400, "BadRequestError", f"max_tokens={max_tokens} cannot be greater than max_model_len={max_model_len}. "
                      f"Please request fewer output tokens. (parameter=max_tokens, value={max_tokens})", param="max_tokens", vllm=True)
    if prompt_tokens > max_model_len:
        raise Refused(400, "BadRequestError", f"This model's maximum context length is {max_model_len} tokens. However, your "
                      f"prompt contains at least {prompt_tokens} input tokens, which exceeds this limit even without any output "
                      f"tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value={prompt_tokens})",
                      param="input_tokens", vllm=True)
    form = body.get("response_format")
    if isinstance(form, dict) and form.get("type") == "json_schema":
        error = schema_error((form.get("json_schema") or {}).get("schema"))
        if error is not None:
            raise Refused(400, "BadRequestError", f"Grammar error: {error}", vllm=True)


def model_permission() -> dict:
    return {"id": "modelperm-fake", "object": "model_permission", "created": 0, "allow_create_engine": False,
            "allow_sampling": True, "allow_logprobs": True, "allow_search_indices": False, "allow_view": True,
            "allow_fine_tuning": False, "organization": "*", "group": None, "is_blocking": False}


def prometheus_text(labels: str, families: list[tuple[str, str, str, list[tuple[str, float]]]]) -> str:
    """Prometheus' text format as vLLM writes it: each family's HELP and TYPE (a counter's named with
    its ``_total``), then one line per sample, the server's ``labels`` first, then the sample's own."""
    lines = []
    for name, kind, text, samples in families:
        lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]
        lines += [f"{name}{{{labels}{',' + own if own else ''}}} {float(value)}" for own, value in samples]
    return "\n".join(lines) + "\n"
