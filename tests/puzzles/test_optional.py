"""``implements`` answers as ``isinstance`` does for the optional protocols, whatever the class or the
instance holds."""

import pytest

from puzzles import BestOfN, SamplingPolicy, Secrets, implements


class Whole:
    def secrets(self, role):
        return ()

    def candidates_wanted(self, role):
        return 1

    def choose(self, role, candidates):
        return 0


class Half:
    def candidates_wanted(self, role):
        return 1


class BlockedInClass(Whole):
    secrets = None  # a subclass may switch a part off


class Plain:
    pass


def blocked_on_instance():
    obj = Whole()
    obj.secrets = None
    return obj


def given_on_instance():
    obj = Plain()
    obj.secrets = lambda role: ()
    return obj


@pytest.mark.parametrize("make", [Whole, Half, BlockedInClass, Plain, blocked_on_instance, given_on_instance, lambda: 3])
@pytest.mark.parametrize("protocol", [Secrets, BestOfN, SamplingPolicy])
def test_implements_agrees_with_isinstance(make, protocol):
    for _ in range(2):  # the second answer comes from what was worked out for the class
        obj = make()
        assert implements(obj, protocol) == isinstance(obj, protocol)


def test_an_instance_of_its_own_does_not_change_the_answer_for_its_class():
    assert implements(blocked_on_instance(), Secrets) == isinstance(blocked_on_instance(), Secrets)
    assert implements(Whole(), Secrets) is True
    assert implements(given_on_instance(), Secrets) is True
    assert implements(Plain(), Secrets) is False
