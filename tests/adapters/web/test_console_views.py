"""The console's preview diff shows agent-supplied text as visible text: a line separator or a
bidi override in a title can neither add a line to the diff a person approves from nor
reorder it."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from foldkit_agent.adapters.web.console.views import diff_lines, outcome_words

HOSTILE = "<b>x</b>\u202eevil\u2028+ fake line\u2029\u0085"


def test_a_hostile_title_is_one_removed_line_with_its_hidden_characters_named() -> None:
    lines = diff_lines({"todos": [{"title": HOSTILE}]}, [{"op": "remove", "path": "/todos/0"}])
    assert lines is not None
    removed = [d.text for d in lines if d.kind == "removed"]
    (title,) = [t for t in removed if '"title"' in t]
    for named in ("⟨U+202E⟩", "⟨U+2028⟩", "⟨U+2029⟩", "⟨U+0085⟩"):
        assert named in title
    assert title.isprintable()
    assert "<b>x</b>" in title  # markup is text here; the template escapes it


@given(st.text().filter(lambda t: t != "kept"))
def test_every_string_in_a_diff_stays_on_its_own_line(text: str) -> None:
    lines = diff_lines({"a": [text, "kept"]}, [{"op": "remove", "path": "/a/0"}])
    assert lines is not None
    for line in lines:
        assert line.text.splitlines() in ([line.text], [])  # nothing splits it
        assert all(unicodedata.category(ch) not in ("Cc", "Cf") for ch in line.text)
    assert len([d for d in lines if d.kind == "removed"]) == 1


def test_an_activity_outcome_reads_as_words_and_an_unknown_one_as_it_is() -> None:
    assert outcome_words("AgentInvalidInputError") == "invalid input"
    assert outcome_words("AgentAuthorizationError") == "not allowed"
    assert outcome_words("failed") == "the application reported a failure"
    assert outcome_words("SomethingNew") == "SomethingNew"
