"""Every hook written inline with no annotation, typed from the declaration: clean."""

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from foldkit_agent import AgentRuntime, Invocation, Program, agent, surface

from .todo import (
    App,
    CreateInput,
    DeletedTodo,
    DeleteInput,
    FailedToDelete,
    Model,
    RequestedCreateTodo,
    RequestedDeleteTodo,
    TodoMessage,
    Todos,
    User,
    update,
)

TodoAgent = agent.for_application(App).with_principal(User)

mapped = TodoAgent.variant(
    description="Delete a todo",
    input=DeleteInput,
    to_message=lambda inp, ctx: RequestedDeleteTodo(id=inp.id),
    available=lambda model: len(model.todos) > 0,
    authorize=lambda req: req.principal is not None and req.principal.can_delete,
    confirm=lambda req: req.input.id != "pinned" and req.model.selected is None,
    completion=agent.Completion(
        success=DeletedTodo,
        failure=FailedToDelete,
        correlate=lambda req, res, call: req.id == res.id and call.invocation.id != "",
    ),
)
direct = TodoAgent.variant(
    RequestedDeleteTodo,
    description="Delete a todo",
    authorize=lambda req: req.input.id != "pinned",
)
on_state = TodoAgent.variant(
    description="Create a todo",
    input=CreateInput,
    to_message=lambda inp, ctx: RequestedCreateTodo(title=inp.title, request_id=ctx.invocation.id),
    completion=agent.when(
        projection=Todos, predicate=lambda value, req: req.title in value["todos"]
    ),
)
Contract = TodoAgent.make(
    context=Todos,
    messages=TodoAgent.expose({RequestedCreateTodo: on_state, RequestedDeleteTodo: mapped}),
)
Named = TodoAgent.make(messages=TodoAgent.expose(TodoMessage, {RequestedDeleteTodo: direct}))


def principal(invocation: Invocation) -> User | None:
    return invocation.credentials if isinstance(invocation.credentials, User) else None


async def principal_later(invocation: Invocation) -> User | None:
    return principal(invocation)


@asynccontextmanager
async def runtime() -> AsyncGenerator[AgentRuntime[Model, User]]:
    audit = agent.audit_log(capacity=10, principal=lambda who: who)
    also = agent.audit_log(record_principal=lambda who: who)
    async with Program(init=Model(), update=update, message=TodoMessage).run() as running:
        TodoAgent.bind(definition=Named, host=running.host, principal=principal_later, audit=also)
        rt = TodoAgent.bind(
            definition=Contract, host=running.host, audit=audit, principal=principal
        )
        await rt.messages.dispatch(RequestedDeleteTodo, {"id": "t1"})
        await rt.messages.dispatch("delete_todo", {"id": "t1"})
        await rt.messages.dispatch(RequestedDeleteTodo, DeleteInput(id="t1"))
        yield rt


# A page feature as the context: its projection is the contract's.
AddTodo = surface.action(name="add_todo", description="Add a todo", message=RequestedCreateTodo)
TodoList = surface.feature(projection=Todos, actions=[AddTodo])
Featured = TodoAgent.make(
    context=TodoList, messages=TodoAgent.expose({RequestedCreateTodo: TodoAgent.action(AddTodo)})
)
AddNamed = surface.action(
    name="add_named",
    description="Add a todo",
    message=RequestedCreateTodo,
    input=CreateInput,
    to_message=lambda inp, ctx: RequestedCreateTodo(title=inp.title),
)
TodoAgent.action(AddTodo, authorize=lambda req: req.input.title != "")
TodoAgent.action(AddNamed, authorize=lambda req: req.input.title != "")
