"""Google ADK's ``RemoteA2aAgent`` against ``foldkit-agent serve ... --a2a``: the recipe of
docs/a2a.md, run. One remote agent per skill names its skill with ADK's request-metadata
hook; the one whose skill takes input (``select_todo``) sends it as one data part through a
part converter of its own (ADK sends text otherwise). Each runs as the root agent of ADK's
``InMemoryRunner``. Usage: ``python adk_a2a_agent.py ORIGIN``; prints what each run ended with.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from a2a.types import Part
from google.adk.a2a.converters.part_converter import convert_genai_part_to_a2a_part
from google.adk.agents.remote_a2a_agent import RemoteA2aAgent
from google.adk.runners import InMemoryRunner
from google.genai import types
from google.protobuf import json_format, struct_pb2
from plan import url

SKILLS = "https://foldkit-agent.dev/a2a/skills/v1"


def skill(name: str) -> Any:
    """ADK's request-metadata hook, naming the skill to run."""
    return lambda ctx, message: {SKILLS: {"skill": name}}


def json_as_data(part: types.Part) -> Any:
    """A text part holding a JSON object goes as one data part (the skill's input)."""
    if part.text is not None and part.text.lstrip().startswith("{"):
        value = struct_pb2.Value()
        json_format.ParseDict(json.loads(part.text), value)
        return Part(data=value)
    return convert_genai_part_to_a2a_part(part)


async def ask(agent: RemoteA2aAgent, text: str) -> dict[str, Any]:
    """Run ``agent`` on ``text``; what its last event says: the task's state and its result
    artifact's data, or the error ADK reports."""
    runner = InMemoryRunner(agent=agent, app_name="field")
    session = await runner.session_service.create_session(app_name="field", user_id="u")
    prompt = types.Content(role="user", parts=[types.Part(text=text)])
    seen: dict[str, Any] = {}
    async for event in runner.run_async(user_id="u", session_id=session.id, new_message=prompt):
        if event.error_message:
            seen = {"error": event.error_message}
        response = (event.custom_metadata or {}).get("a2a:response")
        if isinstance(response, dict) and "status" in response:
            artifacts = response.get("artifacts") or [{}]
            parts = artifacts[0].get("parts") or [{}]
            seen = {"state": response["status"]["state"], "result": parts[0].get("data")}
    return seen


async def main() -> None:
    card = f"{url()}/.well-known/agent-card.json"
    select = RemoteA2aAgent(
        name="select_todo",
        agent_card=card,
        a2a_request_meta_provider=skill("select_todo"),
        genai_part_converter=json_as_data,
    )
    delete = RemoteA2aAgent(
        name="delete_selected_todo",
        agent_card=card,
        a2a_request_meta_provider=skill("delete_todo"),
    )
    bare = RemoteA2aAgent(name="no_skill_named", agent_card=card)
    answers = {
        "no_skill_named": await ask(bare, "Delete the selected todo."),
        "select_todo": await ask(select, '{"id": "t1"}'),
        "delete_todo": await ask(delete, "Delete the selected todo."),
    }
    print(json.dumps(answers))


asyncio.run(main())
