"""What the surface answers: a capability as the page registers it."""

from __future__ import annotations

from foldkit_agent import agent
from foldkit_agent.adapters.web.results import page_tool
from tests.support.counter import Incremented, Msg, Reset


def test_a_page_tool_carries_read_only_and_leaves_out_a_missing_title() -> None:
    definition = agent.make(
        messages=agent.expose(
            Msg, {Incremented: agent.variant(description="Peek", read_only=True), Reset: "Reset"}
        )
    )
    peek, reset = (page_tool(c) for c in definition.capabilities)
    assert peek["annotations"] == {"readOnlyHint": True}
    assert "title" not in peek
    assert reset["annotations"] == {"readOnlyHint": False}
    assert list(reset) == ["name", "description", "inputSchema", "annotations"]
