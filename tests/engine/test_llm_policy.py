"""The model-backed policy (``LLMPolicy``) against a backend double: best of n samples each reply
with its own seed index, and with chat memory the chat goes on with the reply that was played."""

from __future__ import annotations

from engine.policies.llm import LLMPolicy
from bus import Usage
from engine.backends import Completion
from puzzles.turn import TurnContext
from puzzles.policy import SamplingPolicy


class Scripted:
    """A backend double: sample i answers "reply i"."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    async def complete(self, request):
        self.calls.append((request.user, request.history, request.sample))
        return Completion(f"reply {request.sample}", Usage(model="m", prompt_tokens=10, completion_tokens=2))


class ChatPrompter:
    chat_memory = True

    def render(self, context):
        return "system", f"turn {context.turn}"

    def schema(self, context):
        return None


def context(turn: int) -> TurnContext:
    return TurnContext(game_id=0, role="a", turn=turn, max_turns=5, view=None, feedback=None, conversation=())


async def test_with_chat_memory_the_chat_goes_on_with_the_candidate_played():
    backend = Scripted()
    policy = LLMPolicy(backend, ChatPrompter())
    assert isinstance(policy, SamplingPolicy)
    answers = await policy.replies(context(1), 3)
    assert [a.text for a in answers] == ["reply 0", "reply 1", "reply 2"]
    turn = Usage.total([a.usage for a in answers])
    assert turn.calls == 3 and turn.prompt_tokens == 30
    assert {a.prompt["user"] for a in answers} == {"turn 1"}
    policy.chose(2)
    await policy.replies(context(2), 2)
    assert {c[1] for c in backend.calls[3:]} == {(("turn 1", "reply 2"),)}
    assert sorted(c[2] for c in backend.calls) == [0, 0, 1, 1, 2]


class PlainPrompter:
    chat_memory = False

    def render(self, context):
        return f"you are {context.role}", f"turn {context.turn}"

    def schema(self, context):
        return {"turn": context.turn}


class Structured(Scripted):
    """Also keeps the (system prompt, schema) of each call."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[tuple] = []

    async def complete(self, request):
        self.sent.append((request.system, request.schema))
        return await super().complete(request)


async def test_without_chat_memory_each_turn_is_one_call_on_its_own_prompt():
    backend = Structured()
    policy = LLMPolicy(backend, PlainPrompter(), structured=True)
    assert (await policy.reply(context(1))).text == "reply 0"
    answer = await policy.reply(context(2))
    assert answer.text == "reply 0"
    assert backend.calls == [("turn 1", (), 0), ("turn 2", (), 0)]  # no earlier turns sent
    assert backend.sent == [("you are a", {"turn": 1}), ("you are a", {"turn": 2})]
    assert policy.history == [] and answer.usage.calls == 1
    assert answer.prompt == {"system": "you are a", "user": "turn 2"}


class ModulePrompter(PlainPrompter):
    """Runs one agent module (one more model call) before each turn."""

    async def prepare(self, context, notes, ask):
        await ask("module system", "module user", "plan")
        return context


async def test_the_modules_calls_count_in_the_first_answer_and_the_message_is_counted_with_the_run_s_tokenizer():
    class Counted(Scripted):
        class tokenizer:
            @staticmethod
            def count(text):
                return len(text)

    policy = LLMPolicy(Counted(), ModulePrompter())
    first, second = await policy.replies(context(1), 2)
    assert (first.usage.calls, first.usage.prompt_tokens, second.usage.calls) == (2, 20, 1)
    assert first.prompt is second.prompt and [m["purpose"] for m in first.prompt["modules"]] == ["plan"]
    assert first.count_tokens("hello") == 5


async def test_a_group_members_module_calls_are_its_own_samples():
    """Member k of a group samples every call as k, the agent modules' too: a response cache keeps
    them apart from member 0's."""
    from engine.policies.member import member_seat

    backend = Scripted()
    await member_seat(LLMPolicy(backend, ModulePrompter()), 2).reply(context(1))
    assert backend.calls == [("module user", (), 2), ("turn 1", (), 2)]
