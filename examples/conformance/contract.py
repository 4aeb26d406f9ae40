"""What the conformance suite may see and do: its fixture tools as this app's Messages.

Each variant's name is the tool name the suite calls; each answer is what the library gives
any capability (its text and structured data). The fixtures the library deliberately does not
offer (image and audio content, log messages, sampling, prompts, fixed ``test://`` resource
URIs, ...) are listed with their reasons in ``tests/conformance/expected-failures.yml``.
"""

from __future__ import annotations

from pydantic import BaseModel

from foldkit_agent import agent, projection

from .app import (
    App,
    AskedForText,
    FinishedSlowWork,
    GaveResponse,
    RequestedFailingWork,
    SentStructuredInput,
    StartedSlowWork,
    WorkFailed,
)


class NoInput(BaseModel):
    pass


Fixtures = agent.for_application(App)

ConformanceAgent = Fixtures.make(
    context=projection.pick(App.model.texts_asked, App.model.work_finished),
    messages=Fixtures.expose(
        {
            AskedForText: Fixtures.variant(
                name="test_simple_text",
                description="Answers with simple text.",
                destructive=False,
                idempotent=True,
                open_world=False,
            ),
            StartedSlowWork: Fixtures.variant(
                name="test_tool_with_progress",
                description="Slow work: reports progress while it waits for its completion.",
                destructive=False,
                open_world=False,
                input=NoInput,
                to_message=lambda _inp, ctx: StartedSlowWork(request_id=ctx.invocation.id),
                completion=agent.Completion(
                    success=FinishedSlowWork,
                    correlate=agent.by_invocation_id("request_id"),
                    timeout=5.0,
                ),
            ),
            RequestedFailingWork: Fixtures.variant(
                name="test_error_handling",
                description="Work whose completion always reports failure.",
                destructive=False,
                open_world=False,
                input=NoInput,
                to_message=lambda _inp, ctx: RequestedFailingWork(request_id=ctx.invocation.id),
                completion=agent.Completion(
                    success=FinishedSlowWork,
                    failure=WorkFailed,
                    correlate=agent.by_invocation_id("request_id"),
                    timeout=5.0,
                ),
            ),
            GaveResponse: Fixtures.variant(
                name="test_elicitation",
                description="Records a message once a person approves it (asked by elicitation).",
                destructive=False,
                open_world=False,
                confirm=True,
            ),
            SentStructuredInput: Fixtures.variant(
                name="json_schema_2020_12_tool",
                description="Takes a name and a nested address object.",
                destructive=False,
                idempotent=True,
                open_world=False,
            ),
        }
    ),
    resources=[
        Fixtures.resource(
            "last-input",
            description="The last response and structured input the suite sent.",
            projection=projection.pick(
                App.model.last_response, App.model.last_name, App.model.last_address
            ),
        ),
    ],
)
