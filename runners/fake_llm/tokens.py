"""Token ids and log-probabilities as the real servers return them, from a stand-in tokenizer.

The chat template is ChatML, as SmolLM2's (``<|im_start|>`` id 1, ``<|im_end|>`` id 2, the
end-of-turn token a finished reply ends with); the text between special tokens is cut into runs of
whitespace, of letters, single digits and single other characters, each one id from its CRC-32, and
each sampled token gets a log-probability from its id and place. Like a real tokenizer it cuts a
reply's text as it cut it before only where the text around it does not join it (a reply that begins
with a space joins the newline before it): the prefix property a multi-turn trajectory relies on
holds as it does on a real server, and fails where it would.

Three forms (``FakeConfig.token_form``): ``vllm`` (``return_token_ids``: ``prompt_token_ids`` and each
choice's ``token_ids``; ``logprobs``: entries of token, logprob, bytes and ``top_logprobs``), ``llamacpp``
(``logprobs`` with ``top_logprobs`` of at least 1: entries that carry each token's ``id`` too, the
end-of-turn token left out of a stream, as llama.cpp's server does; ``/apply-template`` and
``/tokenize`` give the prompt's ids), and ``none`` (a server that returns neither, as an API provider).
"""

from __future__ import annotations

import re
import zlib
from typing import Any, Literal

TokenForm = Literal["vllm", "llamacpp", "none"]
TOKEN_FORMS: tuple[TokenForm, ...] = ("vllm", "llamacpp", "none")
START, END = 1, 2
SPECIAL = {"<|im_start|>": START, "<|im_end|>": END}
_SPECIAL = re.compile(r"(<\|im_start\|>|<\|im_end\|>)")
_PIECE = re.compile(r"\s+|[A-Za-z]+|\d|[^\sA-Za-z\d]")
VOCAB = 49_152


def _piece_id(piece: str) -> int:
    return 3 + zlib.crc32(piece.encode("utf-8", "surrogatepass")) % (VOCAB - 3)


def pieces(text: str) -> list[str]:
    """``text`` as the tokenizer cuts it (special tokens whole)."""
    out: list[str] = []
    for part in _SPECIAL.split(text):
        if part in SPECIAL:
            out.append(part)
        elif part:
            out.extend(_PIECE.findall(part))
    return out


def tokenize(text: str) -> list[int]:
    return [SPECIAL.get(piece) or _piece_id(piece) for piece in pieces(text)]


def render(messages: list[Any]) -> str:
    """The chat template (ChatML) of ``messages``, with the assistant's turn opened after them."""
    parts = []
    for message in messages:
        if isinstance(message, dict):
            content = message.get("content")
            if isinstance(content, list):
                content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
            parts.append(f"<|im_start|>{message.get('role', 'user')}\n{content or ''}<|im_end|>\n")
    return "".join(parts) + "<|im_start|>assistant\n"


def logprob(token: int, place: int) -> float:
    return -((token * 31 + place * 17) % 4000) / 1000.0


class Sampled:
    """A reply's tokens as the fake sampled them: the prompt's ids, the completion's (its text's,
    then the end-of-turn token unless the reply was cut) and their texts."""

    def __init__(self, messages: list[Any], text: str, cut: bool) -> None:
        self.prompt_ids = tokenize(render(messages))
        self.texts = pieces(text) + ([] if cut else ["<|im_end|>"])
        self.ids = [SPECIAL.get(piece) or _piece_id(piece) for piece in self.texts]

    def entry(self, place: int, form: TokenForm) -> dict[str, Any]:
        """The ``logprobs.content`` entry of the token at ``place``, in the server's form."""
        token, piece = self.ids[place], self.texts[place]
        value = logprob(token, place)
        if form == "llamacpp":  # a special token as empty text
            shown = "" if piece in SPECIAL else piece
            top = {"id": token, "token": shown, "bytes": list(shown.encode("utf-8", "surrogatepass")), "logprob": value}
            return {**top, "top_logprobs": [top]}
        return {"token": piece, "logprob": value, "bytes": list(piece.encode("utf-8", "surrogatepass")), "top_logprobs": []}


def asked(body: dict, form: TokenForm) -> tuple[bool, bool]:
    """(whether the reply carries token ids in vLLM's fields, whether it carries logprobs), as the
    server of ``form`` reads the request."""
    if form == "none":
        return False, False
    logprobs = body.get("logprobs") is True
    if form == "llamacpp":  # with top_logprobs 0 its chat endpoint leaves the logprobs out
        top = body.get("top_logprobs")
        return False, logprobs and (top is None or (isinstance(top, int) and top > 0))
    return body.get("return_token_ids") is True, logprobs
