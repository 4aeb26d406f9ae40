"""A person's answer as the console and the page post it: approve, decline with a message, or
approve with edited input; anything else is refused with the sentence saying what to send."""

from __future__ import annotations

from foldkit_agent import Approval
from foldkit_agent.adapters.web.decision import MAX_MESSAGE, approval_from


def test_the_three_answers_a_person_can_give() -> None:
    assert approval_from({"approve": True}, "ann") == Approval(approved=True, by="ann")
    declined = approval_from({"approve": False, "message": "  not that one "}, "ann")
    assert declined == Approval(approved=False, by="ann", message="not that one")
    edited = approval_from({"approve": True, "input": {"title": "Oat milk"}}, "ann")
    assert edited == Approval(approved=True, by="ann", input={"title": "Oat milk"})


def test_a_blank_message_is_no_message() -> None:
    assert approval_from({"approve": False, "message": "   "}, "ann") == Approval(False, "ann")


def test_malformed_answers_say_what_to_send() -> None:
    assert approval_from({"approve": "yes"}, "ann") == (
        'Send {"approve": true} or {"approve": false, "message": "..."}.'
    )
    assert approval_from({"approve": True, "by": "mallory"}, "ann") == (
        'Send {"approve": true} or {"approve": false, "message": "..."}.'
    )
    assert approval_from({"approve": True, "message": "ok"}, "ann") == (
        f"A message goes with a decline, as text of at most {MAX_MESSAGE} characters."
    )
    assert approval_from({"approve": False, "message": "x" * (MAX_MESSAGE + 1)}, "ann") == (
        f"A message goes with a decline, as text of at most {MAX_MESSAGE} characters."
    )
    assert approval_from({"approve": False, "input": {}}, "ann") == (
        "Edited input goes with an approval, as a JSON object."
    )
    assert approval_from({"approve": True, "input": [1]}, "ann") == (
        "Edited input goes with an approval, as a JSON object."
    )
