"""Record an exchange with a real vLLM server into ``exchange.json`` beside this file, which
``tests/runners/test_fake_llm_as_vllm.py`` holds the local server to:

    python tests/data/vllm/record.py http://127.0.0.1:PORT smollm2 MAX_MODEL_LEN
    python tests/data/vllm/record.py http://127.0.0.1:PORT smollm2 tokens   # only the token exchanges, merged in

The server as the engine starts it: ``vllm serve FOLDER --served-model-name smollm2 --max-model-len 2048
--max-num-seqs 8 --enable-prompt-tokens-details`` (``asymgames setup-vllm`` makes the folder). Each
request is sent as written here; the status, the body (JSON, or a stream's data lines) and the
``/metrics`` text read while a structured burst is in flight are kept. Standard library only."""

from __future__ import annotations

import json
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

SYSTEM = ("You are Alice. You and your partner each see half of a puzzle: the shapes at every position on your side, "
          "the shape-color pairs in a shuffled order on your partner's. Talk until both of you hold the whole answer. "
          "Answer with one JSON object and nothing else. " * 4)  # over two of the prefix cache's blocks
USER = "Turn 1 of 6. Your view: position 1 circle, position 2 square, position 3 star. Write your message."
SCHEMA = {"type": "object", "properties": {"message": {"type": "string", "maxLength": 60}},
          "required": ["message"], "additionalProperties": False}


def chat(model: str, max_tokens: int = 12, **extra) -> dict:
    return {"model": model, "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}],
            "max_tokens": max_tokens, "temperature": 0.0, "seed": 1, **extra}


def structured(model: str, schema: object = SCHEMA, max_tokens: int = 40) -> dict:
    return chat(model, max_tokens, response_format={"type": "json_schema", "json_schema": {"name": "reply", "schema": schema, "strict": True}})


def send(base: str, method: str, path: str, body: dict | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", "Authorization": "Bearer EMPTY"})
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            status, kind, raw = response.status, response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as error:
        status, kind, raw = error.code, error.headers.get("Content-Type", ""), error.read()
    text = raw.decode()
    if "text/event-stream" in kind:
        payload: object = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    elif "json" in kind:
        payload = json.loads(text)
    else:
        payload = text
    return {"method": method, "path": path, "request": body, "status": status, "content_type": kind.split(";")[0], "body": payload}


def metrics_under_load(base: str, model: str, seqs: int) -> str:
    """The /metrics text read while twice ``seqs`` structured requests, each with a new schema, are in
    flight (so that some run, some wait for room and some wait for their schema)."""
    threads = []
    for i in range(2 * seqs):
        schema = {**SCHEMA, "properties": {f"message_{i}": {"type": "string", "maxLength": 60}}, "required": [f"message_{i}"]}
        thread = threading.Thread(target=send, args=(base, "POST", "/v1/chat/completions", structured(model, schema, 60)))
        thread.start()
        threads.append(thread)
    best, best_busy = "", -1.0
    while any(t.is_alive() for t in threads):
        with urllib.request.urlopen(base + "/metrics", timeout=30) as response:
            text = response.read().decode()
        busy = sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                   if line.startswith(("vllm:num_requests_running", "vllm:num_requests_waiting{")))
        if busy > best_busy:
            best, best_busy = text, busy
        time.sleep(0.2)
    for thread in threads:
        thread.join()
    return best


def token_exchanges(base: str, model: str) -> dict[str, dict]:
    """Replies that carry their token ids and logprobs (``--tokens``), whole and streamed."""
    asked = {"logprobs": True, "return_token_ids": True}
    return {
        "tokens": send(base, "POST", "/v1/chat/completions", chat(model, 40, **asked)),
        "tokens_stream": send(base, "POST", "/v1/chat/completions",
                              chat(model, 40, stream=True, stream_options={"include_usage": True}, **asked)),
    }


def main(base: str, model: str, context: int) -> None:
    exchanges = {
        "models": send(base, "GET", "/v1/models"),
        "chat": send(base, "POST", "/v1/chat/completions", chat(model)),
        "chat_again": send(base, "POST", "/v1/chat/completions", chat(model)),  # the prompt now in the prefix cache
        "cut": send(base, "POST", "/v1/chat/completions", chat(model, 2)),
        "stream": send(base, "POST", "/v1/chat/completions", chat(model, stream=True, stream_options={"include_usage": True})),
        "structured": send(base, "POST", "/v1/chat/completions", structured(model)),
        "tokenize": send(base, "POST", "/tokenize", {"model": model, "messages": chat(model)["messages"]}),
        "max_tokens_over_context": send(base, "POST", "/v1/chat/completions", chat(model, 2 * context)),
        "prompt_too_long": send(base, "POST", "/v1/chat/completions",
                                {**chat(model), "messages": [{"role": "user", "content": "word " * (context + 50)}]}),
        "unknown_model": send(base, "POST", "/v1/chat/completions", chat(model + "-nope")),
        "bad_schema": send(base, "POST", "/v1/chat/completions", structured(model, {"type": "object", "properties": 7})),
        **token_exchanges(base, model),
    }
    here = Path(__file__).parent
    (here / "exchange.json").write_text(json.dumps(exchanges, indent=1) + "\n", encoding="utf-8")
    (here / "metrics.txt").write_text(metrics_under_load(base, model, 8), encoding="utf-8")


def merge_tokens(base: str, model: str) -> None:
    path = Path(__file__).parent / "exchange.json"
    exchanges = {**json.loads(path.read_text(encoding="utf-8")), **token_exchanges(base, model)}
    path.write_text(json.dumps(exchanges, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[3] == "tokens":
        merge_tokens(sys.argv[1], sys.argv[2])
    else:
        main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
