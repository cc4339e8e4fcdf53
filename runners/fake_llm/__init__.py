"""A local model server for dry runs and tests: speaks the OpenAI and Anthropic APIs and vLLM's extras.

    python -m runners.fake_llm --port 8000 --rpm 600 --latency 0.2
    OPENAI_API_KEY=x python -m runners.concurrent --agent ROLE=openai:share_everything \\
        --openai-url http://127.0.0.1:8000/v1 --games 100

Endpoints: ``POST /v1/chat/completions`` (plain and streaming), ``POST /v1/messages`` (Anthropic, plain
and streaming), ``GET /health``, ``GET /version``, ``GET /v1/models``, ``GET /metrics`` (``vllm:num_requests_running``,
``vllm:num_requests_waiting``), ``POST /tokenize`` (vLLM's and llama.cpp's), ``POST /apply-template``
(llama.cpp's), and ``GET /fake/stats`` (what it served); both
batch APIs (OpenAI's files and batches, Anthropic's Message Batches: ``batches``), whose batches end
after ``--batch-delay`` seconds and may expire or fail (``--batch-fault``).

Replies play the game (``players``): every registered game is asked to read the prompt back, and the
reply is what a scripted strategy of that game would write: the one the model is named after
(``openai:one_piece``), else ``--strategy``. Each agent of each game (named by the engine's
``X-Game-Id`` header) keeps its own strategy object, seeded from its game, so games through the
server are the games played in process; a call without the header is answered with no memory at
all. Prompts no game can read get a reply without JSON.

A reply constraint is read as the servers read it: a JSON schema (``response_format``), or a GBNF
grammar (llama.cpp's ``grammar``; vLLM's ``structured_outputs.grammar`` from 0.10.2 and
``guided_grammar`` before 0.12, by the version it plays, ``--vllm-version``, which ``GET /version``
says; a field that version does not take is ignored, as vLLM does, and counted in ``ignored``),
refused with a 400 when it cannot be parsed or comes with another; ``/fake/stats`` counts the calls by constraint and
the replies a grammar would not have let through (``off_grammar``: none, where a game's grammar takes
everything its strategies write).

It enforces requests and tokens per minute with real 429 replies, ``retry-after`` and the providers'
rate-limit headers; ``--max-num-seqs`` makes it a continuously batching server (that many requests
run at once, the rest wait); ``--fault KIND=P`` injects faults (429, 500, 503, 529, timeout,
incomplete, truncated) and ``--storm START:SECONDS`` answers 429 to everything for a while.

A call that asks for its tokens gets them as the real servers return them (``--token-form``: vLLM's
``return_token_ids`` and ``logprobs``, llama.cpp's ``logprobs`` with ids, or none), from a stand-in
tokenizer with SmolLM2's chat template (``tokens``).

Modules: ``server`` (admission and endpoints), ``players`` (the replies), ``wire`` (the providers'
wire formats), ``tokens`` (token ids and logprobs), ``batches`` and ``batch_wire`` (the batch APIs), ``grammar`` (reply grammars), ``cli``
(the command line).
"""

from runners.fake_llm.cli import build_parser, config_from_args, main, serve
from runners.fake_llm.players import Players, strategy_names
from runners.fake_llm.server import FAULT_KINDS, FakeConfig, FakeServer, FakeStats

__all__ = [
    "FAULT_KINDS", "FakeConfig", "FakeServer", "FakeStats", "Players", "build_parser", "config_from_args", "main",
    "serve", "strategy_names",
]
