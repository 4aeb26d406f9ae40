"""A todo application the typing cases declare contracts for (no agent in mind)."""

from pydantic import BaseModel

from foldkit_agent import Message, message_union, projection, surface


class Model(BaseModel, frozen=True):
    todos: tuple[str, ...] = ()
    selected: int | None = None


class User(BaseModel, frozen=True):
    id: str
    can_delete: bool = False


class RequestedCreateTodo(Message):
    title: str
    request_id: str | None = None


class RequestedDeleteTodo(Message):
    id: str


class DeletedTodo(Message):
    id: str


class FailedToDelete(Message):
    id: str
    reason: str


class ReceivedTodos(Message):
    todos: tuple[str, ...]


class DeleteInput(BaseModel):
    id: str


class CreateInput(BaseModel):
    title: str


TodoMessage = message_union(
    RequestedCreateTodo, RequestedDeleteTodo, DeletedTodo, FailedToDelete, ReceivedTodos
)
App = surface.application(model=Model, message=TodoMessage)
Todos = projection.pick(App.model.todos)


def update(model: Model, message: Message) -> Model:
    match message:
        case RequestedCreateTodo(title=title):
            return model.model_copy(update={"todos": (*model.todos, title)})
        case _:
            return model
