"""A study with people: the study file (``spec``), its design as cells and the rule that balances who
plays what (``design``), the journal that lets a study survive a restart (``ledger``), a block's run
directory and a game with its people seated (``games``), the screens between games (``screens``) and
the host that runs it all on one event loop (``host``). No web server: ``runners.study`` serves it."""

from engine.study.design import Cell, cells, condition_names, partner_policy, target
from engine.study.host import Page, StudyHost, Wait
from engine.study.ledger import Ended, Interrupted, Person
from engine.study.screens import Screen
from engine.study.spec import PERSON, Study, StudyError, Texts, load_study

__all__ = [
    "PERSON", "Cell", "Ended", "Interrupted", "Page", "Person", "Screen", "Study", "StudyError", "StudyHost", "Texts",
    "Wait", "cells", "condition_names", "load_study", "partner_policy", "target",
]
