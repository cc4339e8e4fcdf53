"""A game played again with its model seats' recorded replies: how a branch run plays the turns
before its point as they were.

A branch run (``runners.branch``) plays a run's games again from their seeds, one message changed at
a branch point; before the point, each model seat must play what it played then, whatever its
sampling. A run kept with full transcripts (``--transcripts``) holds each model turn's calls: the
prompt (system and user, and how many of the seat's earlier turns its chat sent with it), the agent
modules' calls with their replies, and the raw reply (on a best-of-n turn, every candidate's; the
call's tokens where the run asked for them). Where the run's model settings name such a run
(``BackendSettings.replay``), each model seat of a game calls through ``RecordedCalls``, given the
calls that seat made in the recorded game of the same spec (``RecordedGames``: the spec but for its
game id and branch point): a call the recorded game made, the same system prompt, earlier turns,
prompt and sample number, is answered with the reply recorded then, without a call, each recorded
reply once and in the order made. The game, the seat's own chat (``LLMPolicy.history``: its replies
as it sent them) and all that follows are as if the model had replied so again. A call the game
changed (the seat was shown something else: the changed message, or what followed it) or never
made (a resample asks for other sample numbers) goes to the model, as any call of a run does.

A replayed call counts as a response cache's hit (``Usage.cache_hits``): no attempt, no tokens, cost
0. A reply the recorded game kept cut (one over ``puzzles.turn.MAX_REPLY_CHARS``, a format error) is
replayed as kept.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict, deque
from collections.abc import Iterable
from pathlib import Path

import msgspec
from msgspec import UNSET

from bus import Tokens, Usage
from puzzles import Policy
from puzzles.turn import clean_text

from engine.backends.admission import GAME_CALLED
from engine.backends.base import Backend, Completion, FinishReason, Request
from engine.backends.settings import BackendSettings, History
from engine.backends.wrappers import Wrapper
from engine.plan.spec import GameSpec
from engine.policies.llm import LLMPolicy
from engine.records.rundir import RunDir, RunDirError
from engine.records.transcripts import DETAIL_FULL, Transcript, TranscriptIndex, TranscriptTurn

CallKey = tuple[str, History, str, int]
"""A call as the recorded game made it: system prompt, earlier turns of the chat, prompt, sample number."""

KEPT = 16  # recorded games kept read (the branches of one game are played together)


class RecordedCalls(Wrapper):
    """A seat's model, with the calls the recorded game made answered from ``replies`` (each key's
    replies in the order made, each used once); any other call goes to ``inner``."""

    def __init__(self, inner: Backend, replies: dict[CallKey, deque[Completion]]) -> None:
        super().__init__(inner)
        self.replies = replies

    async def complete(self, request: Request) -> Completion:
        queue = self.replies.get((request.system, request.history, request.user, request.sample))
        if not queue:
            return await self.inner.complete(request)
        recorded = queue.popleft()
        if request.tokens and recorded.tokens is None:
            return await self.inner.complete(request)  # kept without its tokens: asked again, as the cache does
        cut = int(recorded.finish == "length")
        stats = self.inner.limiter.stats
        stats.cache_hits += 1
        stats.cut += cut
        called = GAME_CALLED.get()  # the run's pacing: the game has called
        if called is not None:
            called.set()
        usage = Usage(model=self.name, attempts=0, latency=0.0, cost_usd=0.0, cache_hits=1, cut=cut)
        return Completion(recorded.text, usage, recorded.finish, recorded.tokens if request.tokens else None)


def recorded_calls(turns: Iterable[TranscriptTurn], role: str, *, chat_memory: bool, member: int = 0) -> dict[CallKey, deque[Completion]]:
    """The calls ``role``'s model policy made in the turns of a full transcript, as ``LLMPolicy`` made
    them (its earlier turns, with chat memory: each turn's prompt and the reply played, cleaned; in
    member ``member`` of a group, its sample numbers: ``engine.policies.member``), each with its reply."""
    calls: dict[CallKey, deque[Completion]] = {}
    earlier: list[tuple[str, str]] = []
    for turn in turns:
        prompt = turn.prompt
        if turn.role != role or not isinstance(prompt, dict) or "user" not in prompt:
            continue  # another seat's turn, or one no model played
        system, user = str(prompt.get("system", "")), str(prompt["user"])
        candidates = [str(c["reply"]) for c in turn.candidates if isinstance(c, dict) and "reply" in c]
        first = member * max(len(candidates), 1)
        for module in prompt.get("modules", ()):  # the agent modules' calls, made before the turn's
            key = (str(module["system"]), (), str(module["user"]), first)
            calls.setdefault(key, deque()).append(Completion(str(module["reply"]), _NO_USAGE))
        history: History = tuple(earlier)
        tokens = turn.tokens if isinstance(turn.tokens, Tokens) else None
        usage = turn.usage if isinstance(turn.usage, dict) else {}
        if candidates:  # best of n: sample first + i was candidate i; the one played keeps the turn's tokens
            for i, reply in enumerate(candidates):
                calls.setdefault((system, history, user, first + i), deque()).append(
                    Completion(reply, _NO_USAGE, tokens=tokens if i == turn.chosen else None))
        else:
            finish: FinishReason = "length" if usage.get("cut", 0) else "stop"
            calls.setdefault((system, history, user, first), deque()).append(Completion(turn.reply, _NO_USAGE, finish, tokens))
        if chat_memory:
            earlier.append((user, clean_text(turn.reply)))
    return calls


_NO_USAGE = Usage(model="")


def replaying(policy: Policy, transcript: Transcript, role: str, member: int = 0) -> Policy:
    """The seat's policy, its model's calls answered from ``transcript`` where the recorded game made
    them; any other policy as it is (a scripted one replays itself from the seed)."""
    if not isinstance(policy, LLMPolicy):
        return policy
    calls = recorded_calls(transcript.turns, role, chat_memory=policy.chat_memory, member=member)
    if not calls:
        return policy
    return LLMPolicy(RecordedCalls(policy.backend, calls), policy.prompter, structured=policy.structured, tokens=policy.tokens)


def game_key(spec: GameSpec) -> bytes:
    """What a game is known by across a run and the runs that play it again: its spec but for its
    game id and branch point (a digest of it)."""
    options = msgspec.structs.replace(spec.options, branch=UNSET)
    return hashlib.blake2b(msgspec.json.encode(msgspec.structs.replace(spec, game_id=0, options=options)), digest_size=16).digest()


class RecordedGameMissing(RuntimeError):
    """The run whose transcripts a run replays cannot be read."""


class RecordedGames:
    """The full transcripts of the run at ``path``, each found by the game a spec plays again
    (``transcript``); the last ``KEPT`` read are kept."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._ids: dict[bytes, int] | None = None
        self._index = TranscriptIndex(self.path)
        self._read: OrderedDict[int, Transcript | None] = OrderedDict()

    @classmethod
    def of(cls, settings: BackendSettings) -> RecordedGames | None:
        """The run the settings replay (``BackendSettings.replay``), or None."""
        return cls(Path(settings.replay)) if settings.replay else None

    def transcript(self, spec: GameSpec) -> Transcript | None:
        """The full transcript of the game ``spec`` plays again; None where the run has no such game
        (or kept it without its prompts and raw replies). RecordedGameMissing if the run cannot be read."""
        if self._ids is None:
            try:
                self._ids = {game_key(r.spec): r.game_id for r in RunDir.open(self.path).iter_records() if r.outcome != "error"}
                self._index.refresh()
            except (RunDirError, OSError) as exc:
                raise RecordedGameMissing(f"the run whose transcripts replay the model seats, {self.path}, cannot be read: {exc}") from None
        game_id = self._ids.get(game_key(spec))
        if game_id is None:
            return None
        if game_id in self._read:
            self._read.move_to_end(game_id)
            return self._read[game_id]
        transcript = self._index.get(game_id)
        if transcript is not None and (transcript.detail != DETAIL_FULL or transcript.game_id != game_id):
            transcript = None
        self._read[game_id] = transcript
        if len(self._read) > KEPT:
            self._read.popitem(last=False)
        return transcript
