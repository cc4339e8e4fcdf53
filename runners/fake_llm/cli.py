"""The local model server's command line: ``python -m runners.fake_llm --help``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys

from runners.args import bounded, key_value
from runners.fake_llm.bad_replies import BAD_REPLY_KINDS
from runners.fake_llm.batches import BATCH_FAULT_KINDS
from runners.fake_llm.players import strategy_names
from runners.fake_llm.server import FAULT_KINDS, MAX_MODEL_LEN, VLLM_VERSION, FakeConfig, FakeServer
from runners.fake_llm.tokens import TOKEN_FORMS

PROG = "python -m runners.fake_llm"
DESCRIPTION = "A local model server for dry runs and tests: speaks the OpenAI and Anthropic APIs and vLLM's extras."


def _kind_and_probability(kinds: tuple[str, ...]):
    """An argparse type for KIND=P with KIND one of ``kinds`` and P a probability."""

    def parse(text: str) -> tuple[str, float]:
        try:
            kind, value = key_value(text, "KIND=P")
            probability = float(value)
        except ValueError:
            kind, probability = "", -1.0
        if kind not in kinds or not 0 <= probability <= 1:
            raise argparse.ArgumentTypeError(f"expected KIND=P with KIND one of {', '.join(kinds)} and P in [0, 1], got {text!r}")
        return kind, probability

    return parse


_fault = _kind_and_probability(FAULT_KINDS)
_bad_reply = _kind_and_probability(BAD_REPLY_KINDS)
_batch_fault = _kind_and_probability(BATCH_FAULT_KINDS)


def _storm(text: str) -> tuple[float, float]:
    start, sep, length = text.partition(":")
    try:
        values = (float(start), float(length))
    except ValueError:
        values = (-1.0, -1.0)
    if not sep or values[0] < 0 or values[1] <= 0:
        raise argparse.ArgumentTypeError(f"expected START:SECONDS (after the first request), got {text!r}")
    return values


_positive = bounded(float, 0.0, what="a number >= 0")


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=DESCRIPTION, allow_abbrev=False)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000, help="0 picks a free port (default 8000)")
    p.add_argument("--strategy", default="share_everything", choices=strategy_names(), help="how replies play when the model is not named after a strategy of the game")
    p.add_argument("--latency", type=_positive, default=0.05, help="seconds per request (default 0.05)")
    p.add_argument("--jitter", type=_positive, default=0.0, help="uniform extra seconds per request")
    p.add_argument("--rpm", type=_positive, help="requests per minute, enforced with 429s")
    p.add_argument("--tpm", type=_positive, help="tokens per minute, enforced with 429s")
    p.add_argument("--burst", type=_positive, default=1.0, help="seconds of the per-minute limits one burst may use (default 1)")
    p.add_argument("--max-num-seqs", type=int, help="continuous batching: requests running at once (like vLLM)")
    p.add_argument("--max-model-len", type=int, default=MAX_MODEL_LEN, help=f"tokens of context: a longer prompt or max_tokens gets vLLM's 400 (default {MAX_MODEL_LEN})")
    p.add_argument("--intake", type=_positive, default=0.0, metavar="SEC", help="seconds a request is read before the batch counts it (like vLLM's tokenizing)")
    p.add_argument("--compile-delay", type=_positive, default=0.0, metavar="SEC", help="seconds a new reply schema compiles, its requests waiting deferred (like vLLM's structured output)")
    p.add_argument("--fault", type=_fault, action="append", default=[], metavar="KIND=P", help=f"inject a fault with probability P; KIND: {', '.join(FAULT_KINDS)}")
    p.add_argument("--bad-reply", type=_bad_reply, action="append", default=[], metavar="KIND=P", help=f"make a reply bad with probability P; KIND: {', '.join(BAD_REPLY_KINDS)}")
    p.add_argument("--storm", type=_storm, action="append", default=[], metavar="START:SECONDS", help="answer 429 to everything for SECONDS, START seconds after the first request")
    p.add_argument("--retry-after", type=_positive, default=1.0, metavar="SEC", help="seconds injected 429/503s and storms ask clients to wait (default 1)")
    p.add_argument("--batch-delay", type=_positive, default=0.5, metavar="SEC", help="seconds from a batch's creation to its end (default 0.5; POST /fake/batch-delay changes it)")
    p.add_argument("--batch-fault", type=_batch_fault, action="append", default=[], metavar="KIND=P", help="per batch, with probability P: expired (only its first half runs) or failed (OpenAI's fails, Anthropic's is refused)")
    p.add_argument("--vllm-version", default=VLLM_VERSION, metavar="V", help=f"the vLLM version /version says, which sets the grammar field requests are read by: guided_grammar before 0.12, structured_outputs from 0.10.2 (default {VLLM_VERSION})")
    p.add_argument("--api-key", help="accept only this key (default: any non-empty key)")
    p.add_argument("--model", action="append", default=[], help="a model name /v1/models lists (default: fake); given, any other model gets a 404")
    p.add_argument("--token-form", choices=TOKEN_FORMS, default="vllm", help="how a call's token ids and logprobs are returned where asked: vllm (return_token_ids, logprobs), llamacpp (logprobs with ids; /apply-template and /tokenize) or none (never, as an API provider)")
    p.add_argument("--seed", type=int, default=0)
    return p


def config_from_args(args: argparse.Namespace) -> FakeConfig:
    return FakeConfig(
        strategy=args.strategy, latency=args.latency, jitter=args.jitter, rpm=args.rpm, tpm=args.tpm,
        burst=args.burst, max_num_seqs=args.max_num_seqs, max_model_len=args.max_model_len, intake=args.intake,
        compile_delay=args.compile_delay, faults=dict(args.fault), bad_replies=dict(args.bad_reply), storms=args.storm,
        retry_after=args.retry_after, batch_delay=args.batch_delay, batch_faults=dict(args.batch_fault),
        api_key=args.api_key, seed=args.seed, vllm_version=args.vllm_version, models=args.model or ["fake"], only_models=bool(args.model),
        token_form=args.token_form,
    )


async def serve(config: FakeConfig, host: str, port: int) -> None:
    server = FakeServer(config)
    url = await server.start(host, port)
    print(f"fake model server on {url}  (OpenAI: {url}/v1  Anthropic: {url}  vLLM metrics: {url}/metrics)", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await server.stop()


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    args = build_parser(prog).parse_args(argv)
    try:
        config = config_from_args(args)
        FakeServer(config)  # check the config before binding
    except ValueError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(config, args.host, args.port))
    return 0
