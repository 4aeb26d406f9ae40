"""Each marked line is a mistake strict pyright must reject, with no annotation in the code."""

from foldkit_agent import Host, Invocation, Message, agent, surface

from .todo import (
    App,
    CreateInput,
    DeletedTodo,
    DeleteInput,
    Model,
    ReceivedTodos,
    RequestedCreateTodo,
    RequestedDeleteTodo,
    TodoMessage,
    Todos,
    User,
)

TodoAgent = agent.for_application(App).with_principal(User)

# A mapped variant's hooks read its input model (DeleteInput has ``id``).
TodoAgent.variant(
    description="Delete a todo",
    input=DeleteInput,
    to_message=lambda inp, ctx: RequestedDeleteTodo(id=inp.todo_id),  # expect-error
    authorize=lambda req: req.input.todo_id != "",  # expect-error
    confirm=lambda req: req.input.todo_id != "",  # expect-error
)
# A direct variant's hooks read its Message, when the variant names it.
TodoAgent.variant(
    RequestedDeleteTodo,
    description="Delete a todo",
    authorize=lambda req: req.input.todo_id != "",  # expect-error
)
# available reads the Model; authorize's principal is the builder's User.
TodoAgent.variant(
    description="Delete a todo",
    available=lambda model: model.selected_todo is None,  # expect-error
    authorize=lambda req: req.principal is not None and req.principal.is_admin,  # expect-error
)
# correlate's result is the completion's success (or failure) Message.
TodoAgent.variant(
    description="Delete a todo",
    input=DeleteInput,
    to_message=lambda inp, ctx: RequestedDeleteTodo(id=inp.id),
    completion=agent.Completion(
        success=DeletedTodo,
        correlate=lambda req, res, call: req.id == res.title,  # expect-error
    ),
)
# a when predicate's request is the variant's input.
TodoAgent.variant(
    description="Create a todo",
    input=CreateInput,
    to_message=lambda inp, ctx: RequestedCreateTodo(title=inp.title),
    completion=agent.when(
        projection=Todos,
        predicate=lambda v, request: request.nmae in v,  # expect-error
    ),
)
# input and to_message go together.
TodoAgent.variant(description="Create a todo", input=CreateInput)  # expect-error
# A class key outside the union.
TodoAgent.expose(TodoMessage, {User: "not a Message of the union"})  # expect-error

Contract = TodoAgent.make(
    messages=TodoAgent.expose({RequestedCreateTodo: "Create", RequestedDeleteTodo: "Delete"})
)


def create_only(message: RequestedCreateTodo) -> None:
    pass


# A host narrower than the contract's Messages.
narrow = Host(model=Model, dispatch=create_only)
TodoAgent.bind(definition=Contract, host=narrow)  # expect-error
agent.bind(definition=Contract, host=narrow)  # expect-error


def anything(message: Message) -> None:
    pass


wide = Host(model=Model, dispatch=anything)


def numbered(invocation: Invocation) -> int:
    return 42


def named(invocation: Invocation) -> str:
    return "a str"


# A principal provider of another type than with_principal(User).
TodoAgent.bind(definition=Contract, host=wide, principal=numbered)  # expect-error
TodoAgent.bind(definition=Contract, host=wide, principal=named)  # expect-error
agent.bind(definition=Contract, host=wide, principal=lambda inv: 42)  # expect-error


async def dispatch_what_is_not_exposed() -> None:
    rt = TodoAgent.bind(definition=Contract, host=wide)
    await rt.messages.dispatch(ReceivedTodos, {"todos": []})  # expect-error
    # The input as its model: a wrong field is the model's constructor error.
    await rt.messages.dispatch(RequestedDeleteTodo, DeleteInput(todoId="x"))  # expect-error
    await rt.messages.dispatch(RequestedDeleteTodo, RequestedDeleteTodo(todoId="x"))  # expect-error


# A direct variant that names no Message reads a plain Message: name it to read its fields.
TodoAgent.variant(
    description="Delete a todo",
    authorize=lambda req: req.input.id != "",  # expect-error
)

# Several expose groups: the contract exposes the union of their Messages.
Both = TodoAgent.make(
    messages=[
        TodoAgent.expose({RequestedCreateTodo: "Create"}),
        TodoAgent.expose({RequestedDeleteTodo: "Delete"}),
    ]
)
TodoAgent.bind(definition=Both, host=narrow)  # expect-error
CreateOnly = TodoAgent.make(messages=[TodoAgent.expose({RequestedCreateTodo: "Create"})])
TodoAgent.bind(definition=CreateOnly, host=narrow)

# An action's hooks read its input: the Message it makes, or its input= model.
Add = surface.action(name="add", description="Add", message=RequestedCreateTodo)
TodoAgent.action(Add, authorize=lambda req: req.input.titel != "")  # expect-error
