"""The contract as a committed manifest (``agent.json``, :mod:`.data`) and as documentation
(``AGENT.md``, :mod:`.markdown`), and as plain data for introspection (:mod:`.data`)."""

# Each name is re-exported by its own ``as`` (no ``__all__`` to keep in step with the list).
from .data import MANIFEST_VERSION as MANIFEST_VERSION
from .data import TOKEN_ESTIMATOR as TOKEN_ESTIMATOR
from .data import canonical_json as canonical_json
from .data import context_schema as context_schema
from .data import estimate_tokens as estimate_tokens
from .data import manifest_json as manifest_json
from .data import messages as messages
from .data import resources as resources
from .data import schema as schema
from .data import to_manifest as to_manifest
from .markdown import to_markdown as to_markdown
