"""The game's parameters: checks with the field named, labels, one spelling."""

import msgspec
import pytest

from puzzles.base import InvalidParameter
from puzzles.einstein.params import EinsteinParams


@pytest.mark.parametrize("fields, field", [
    ({"blocks": 3}, "blocks"), ({"blocks": 9}, "blocks"), ({"actions": "talk"}, "actions"),
    ({"actions": "share/ask/none"}, "actions"), ({"verifier": "oracle"}, "verifier"),
    ({"verifier": "communication", "actions": "none"}, "verifier"), ({"candidates": 1}, "candidates"),
    ({"planner_budget": 0}, "planner_budget"), ({"prompt": "claude"}, "prompt"),
    ({"prompt": "gpt", "actions": "share"}, "prompt"), ({"prompt": "gpt", "cot": False}, "prompt"),
])
def test_bad_parameters_name_their_field(fields, field):
    with pytest.raises(InvalidParameter) as caught:
        EinsteinParams(**fields).check()
    assert caught.value.field == field and str(caught.value)


def test_labels_show_what_tells_conditions_apart():
    assert EinsteinParams().labels() == {"N": "4", "actions": "share_ask", "verifier": "none"}
    labels = EinsteinParams(blocks=6, actions="share_ask/ask", verifier="reasoning", cot=False, fix_reasoning=True).labels()
    assert labels == {"N": "6", "actions": "share_ask/ask", "verifier": "reasoning", "cot": "no", "fix_reasoning": "yes"}


def test_a_solve_on_the_last_step_is_a_success_unless_the_reference_codes_rule_is_asked_for():
    assert EinsteinParams().success_on_last_step is True  # the paper: "completed within 30 steps"
    assert EinsteinParams(success_on_last_step=False).labels()["success_on_last_step"] == "no"
    assert "success_on_last_step" not in EinsteinParams().labels()
    old = b'{"game": "einstein", "success_on_last_step": false}'  # as every record saved before holds it
    assert msgspec.json.decode(old, type=EinsteinParams).labels()["success_on_last_step"] == "no"


def test_one_spelling_per_condition():
    assert EinsteinParams(actions="ask/ask").normal() == EinsteinParams(actions="ask")
    assert EinsteinParams(candidates=8).normal() == EinsteinParams()  # no verifier: candidates do not matter
    assert EinsteinParams(verifier="affordance", fix_reasoning=True).normal() == EinsteinParams(verifier="affordance")
    assert EinsteinParams(seek_answers=False).normal() == EinsteinParams()
    assert EinsteinParams(actions="share/ask", seek_answers=False).normal().seek_answers is False


def test_parameters_decode_tagged_and_every_field_has_help():
    params = msgspec.json.decode(b'{"game": "einstein", "blocks": 5, "actions": "none"}', type=EinsteinParams)
    assert params.blocks == 5 and params.modes == ("none", "none")
    assert set(EinsteinParams.HELP) == set(EinsteinParams.__struct_fields__)
