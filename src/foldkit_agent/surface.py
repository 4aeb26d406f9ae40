"""The ``surface`` namespace: capture an application and name its parts (from :mod:`.app`).

App = surface.application(model=Model, message=TodoMessage, initial=..., update=update)
App.model.todos          # a FieldRef
"""

# Each name is re-exported by its own ``as`` (no ``__all__`` to keep in step with the list).
from .app.surface import Action as Action
from .app.surface import Application as Application
from .app.surface import Feature as Feature
from .app.surface import FieldRef as FieldRef
from .app.surface import MessageSet as MessageSet
from .app.surface import action as action
from .app.surface import application as application
from .app.surface import feature as feature
from .app.surface import message_set as message_set
from .app.surface import message_set_union as message_set_union
