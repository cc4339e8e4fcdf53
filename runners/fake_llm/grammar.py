"""Reply grammars as the local server reads them: a GBNF grammar (llama.cpp's form, the one the games'
``ReplyGrammar`` gives) without recursion is a regular language, so it is turned into a Python
regular expression and a reply is checked against it. Hand-written: a tokenizer and one recursive
substitution; the GBNF libraries on PyPI compile for a model's sampler, not for matching text.
"""

from __future__ import annotations

import functools
import json
import re

_TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|(\[(?:[^\]\\]|\\.)*\])|([A-Za-z][\w-]*)|(\{\d+(?:,\d*)?\}|[()|*+?]))')


class GrammarError(ValueError):
    """A grammar this reader cannot read (its syntax, or a rule that refers to itself)."""


@functools.lru_cache(maxsize=64)
def grammar_regex(grammar: str) -> re.Pattern[str]:
    """The language of a GBNF grammar without recursion (one rule a line), ``root`` matched whole."""
    rules: dict[str, str] = {}
    for line in grammar.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, sep, body = line.partition("::=")
            if not sep:
                raise GrammarError(f"not a rule: {line[:80]!r}")
            rules[name.strip()] = body.strip()

    def convert(name: str, seen: tuple[str, ...]) -> str:
        if name in seen:
            raise GrammarError(f"the rule {name} refers to itself")
        if name not in rules:
            raise GrammarError(f"no rule {name}")
        body, out, at = rules[name], [], 0
        while at < len(body):
            token = _TOKEN.match(body, at)
            if token is None:
                raise GrammarError(f"cannot read {body[at:at + 40]!r} in the rule {name}")
            literal, chars, rule, operator = token.groups()
            if literal is not None:
                out.append(re.escape(json.loads(literal)))
            elif chars is not None:
                out.append(chars)
            elif rule is not None:
                out.append(f"(?:{convert(rule, (*seen, name))})")
            else:
                out.append("(?:" if operator == "(" else operator)
            at = token.end()
            while at < len(body) and body[at].isspace():
                at += 1
        return "".join(out)

    try:
        return re.compile(f"(?:{convert('root', ())})\\Z", re.DOTALL)
    except re.error as exc:
        raise GrammarError(str(exc)) from None
