"""The arrows of docs/architecture.md hold in the code: every import under src/foldkit_agent
points down, adapters do not import each other (native may use web), a library's internals
(private attributes, and its protocol objects even without an underscore) are reached only in
its one private module (adapters/<protocol>/_sdk.py, edge/_uvicorn.py), and every test that
needs Node or Chromium is marked."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.paths import ROOT

SRC = ROOT / "src" / "foldkit_agent"
PACKAGE = "foldkit_agent"

EVERYTHING = frozenset({"*"})
ALLOWED: dict[str, frozenset[str]] = {
    # part -> the parts it may import (besides itself); see docs/architecture.md
    "errors": frozenset(),
    "app": frozenset({"errors"}),
    "contract": frozenset({"app", "errors"}),
    "audit": frozenset({"app", "errors"}),
    "runtime": frozenset({"contract", "app", "audit", "errors"}),
    "manifest": frozenset({"contract", "app", "errors"}),
    "edge": frozenset({"runtime", "contract", "app", "audit", "errors"}),
    # every adapter (a protocol package, or one module per in-process framework):
    "adapters.*": frozenset({"runtime", "edge", "contract", "app", "errors"}),
    "adapters.native": frozenset(
        {"adapters.web", "manifest", "runtime", "edge", "contract", "app", "errors"}
    ),
    "cli": EVERYTHING,
    "__main__": EVERYTHING,
}
FRONT_DOOR = frozenset({"(front door)", "agent", "surface", "projection", "message"})
"""The front door and its namespaces may import every part but the adapters and the CLI."""


@dataclass(frozen=True)
class Arrow:
    source: str  # module, e.g. foldkit_agent.runtime.bound
    target: str  # module imported
    line: int

    def __str__(self) -> str:
        return f"{self.source}:{self.line} imports {self.target}"


def module_name(path: Path, root: Path = SRC) -> str:
    parts = [PACKAGE, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def arrows_of(source: str, module: str, is_package: bool) -> Iterator[Arrow]:
    """Every import of ``foldkit_agent`` modules in ``source``, at any depth (lazy ones too)."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    yield Arrow(module, alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                stem = ".".join([*base, node.module] if node.module else base)
            else:
                stem = node.module or ""
            if stem.split(".")[0] != PACKAGE:
                continue
            if node.module is None:  # from . import x: x may be a module
                for alias in node.names:
                    yield Arrow(module, f"{stem}.{alias.name}", node.lineno)
            else:
                yield Arrow(module, stem, node.lineno)


def part_of(module: str) -> str:
    names = module.split(".")[1:]
    if not names or names[0] == "__version__":
        return "(front door)"
    if names[0] == "adapters":
        return "adapters" if len(names) == 1 else f"adapters.{names[1]}"
    return names[0]


def upward(arrow: Arrow) -> bool:
    source, target = part_of(arrow.source), part_of(arrow.target)
    if source == target or target == "adapters":  # the empty adapters package
        return False
    if source in FRONT_DOOR:
        return target.startswith("adapters") or target == "cli"
    allowed = ALLOWED.get(source)
    if allowed is None and source.startswith("adapters."):
        allowed = ALLOWED["adapters.*"]
    if allowed is None:
        return True  # a part docs/architecture.md does not know yet: say where it belongs
    return allowed is not EVERYTHING and target not in allowed


def all_arrows() -> list[Arrow]:
    found: list[Arrow] = []
    for path in sorted(SRC.rglob("*.py")):
        module = module_name(path)
        found.extend(arrows_of(path.read_text(), module, path.name == "__init__.py"))
    return found


def test_every_import_under_src_points_down() -> None:
    arrows = all_arrows()
    assert len(arrows) > 100  # the walk saw the package
    assert [str(a) for a in arrows if upward(a)] == []


def test_the_checker_refuses_an_upward_arrow_of_each_kind() -> None:
    cases = {
        "foldkit_agent.app.program": "from ..contract.declare import Capability",
        "foldkit_agent.contract.declare": "from ..runtime import bound",
        "foldkit_agent.runtime.bound": "def f():\n    from ..adapters.mcp import http_app",
        "foldkit_agent.runtime.dispatch": "import foldkit_agent.edge.guard",
        "foldkit_agent.adapters.mcp.server": "from ..a2a.card import CARD_PATH",
        "foldkit_agent.adapters.web.surface": "from ..native import native_app",
        "foldkit_agent.edge.guard": "from ..cli import serve",
        "foldkit_agent.adapters.langchain": "from .pydantic_ai import toolset",
        "foldkit_agent.adapters.native.codegen": "from ..mcp import mcp_server",
        "foldkit_agent.audit.log": "from ..runtime.bound import AgentRuntime",
    }
    for module, source in cases.items():
        (arrow,) = arrows_of(source, module, is_package=False)
        assert upward(arrow), str(arrow)


def test_native_may_use_the_web_surface_and_the_cli_anything() -> None:
    fine = {
        "foldkit_agent.adapters.native.endpoint": "from ..web.surface import agent_surface",
        "foldkit_agent.cli.serve": "from ..adapters.a2a import a2a_app",
        "foldkit_agent.adapters.a2a.executor": "from ...runtime.bound import AgentRuntime",
    }
    for module, source in fine.items():
        (arrow,) = arrows_of(source, module, is_package=False)
        assert not upward(arrow), str(arrow)


# -- private SDK internals ------------------------------------------------------------------


PRIVATE_MODULES: dict[str, str] = {
    # the one module per library that may reach its internals -> its upgrade test
    "adapters/a2a/_sdk.py": "tests/adapters/a2a/test_sdk.py",
    "adapters/mcp/_sdk.py": "tests/adapters/mcp/test_sdk.py",
    "edge/_uvicorn.py": "tests/edge/test_uvicorn.py",
    "runtime/_otel.py": "tests/runtime/test_otel.py",
}

PROTOCOL_OBJECTS: dict[str, str] = {
    # a library's protocol machinery (public names, no underscore, but no extension point:
    # an upgrade may move it) -> the private module that alone may reach it
    "uvicorn.protocols": "edge/_uvicorn.py",
    "uvicorn.server": "edge/_uvicorn.py",
    "uvicorn.lifespan": "edge/_uvicorn.py",
    "uvicorn.loops": "edge/_uvicorn.py",
    "uvicorn.Server": "edge/_uvicorn.py",
    "h11": "edge/_uvicorn.py",
    "httptools": "edge/_uvicorn.py",
    "mcp.server.streamable_http": "adapters/mcp/_sdk.py",
    "mcp.server.session": "adapters/mcp/_sdk.py",
    "mcp.shared.dispatcher": "adapters/mcp/_sdk.py",
    "mcp.shared.jsonrpc_dispatcher": "adapters/mcp/_sdk.py",
    "a2a.server.routes.jsonrpc_dispatcher": "adapters/a2a/_sdk.py",
    "a2a.server.request_handlers.request_handler": "adapters/a2a/_sdk.py",
}


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for an attribute chain on a name, else ``None``."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def protocol_reaches(source: str, module: str) -> list[str]:
    """Every import of, or attribute chain into, a library's protocol objects
    (:data:`PROTOCOL_OBJECTS`) in ``source``, unless ``module`` (``edge/_uvicorn.py``) is the
    private module that may reach it. Underscore modules of a library count too."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            dotted = _dotted(node)
            names = [dotted] if dotted is not None else []
        for name in names:
            root = name.split(".")[0]
            underscored = root in ("mcp", "a2a", "uvicorn") and any(
                part.startswith("_") and not part.startswith("__") for part in name.split(".")
            )
            owner = next((m for p, m in PROTOCOL_OBJECTS.items() if _within(name, p)), None)
            if owner is None and underscored:
                owner = "edge/_uvicorn.py" if root == "uvicorn" else f"adapters/{root}/_sdk.py"
            if owner is not None and owner != module:
                found.append(f"{node.lineno}: {name}")
                break
    return found


def own_private_attributes() -> set[str]:
    """Underscore attribute names this package defines itself: ``x._a = ...``, class bodies,
    ``__slots__`` and ``setattr(x, "_a", ...)`` (the private modules define none)."""
    names: set[str] = set()
    for path in SRC.rglob("*.py"):
        if str(path.relative_to(SRC)) in PRIVATE_MODULES:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        names.add(item.target.id)
                    elif isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        names.add(item.name)
                    elif (
                        isinstance(item, ast.Assign)
                        and any(
                            isinstance(t, ast.Name) and t.id == "__slots__" for t in item.targets
                        )
                        and isinstance(item.value, ast.Tuple)
                    ):
                        names.update(
                            e.value for e in item.value.elts if isinstance(e, ast.Constant)
                        )
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute | ast.Name)
                and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
                in ("setattr", "__setattr__")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
            ):
                names.add(str(node.args[1].value))
    return {n for n in names if n.startswith("_")}


def sdk_internals_read(source: str, own: set[str]) -> list[str]:
    """``obj._name`` reads (not self/cls, not ours) and ``getattr(obj, "_name")`` calls."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            owner = node.value
            mine = isinstance(owner, ast.Name) and owner.id in ("self", "cls")
            dunder = node.attr.startswith("__") and node.attr.endswith("__")
            if not mine and not dunder and node.attr not in own:
                found.append(f"{node.lineno}: .{node.attr}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and node.args[1].value.startswith("_")
            and not node.args[1].value.endswith("__")
            and node.args[1].value not in own
        ):
            found.append(f"{node.lineno}: {node.func.id}(..., {node.args[1].value!r})")
    return found


SDK_USERS = ("adapters", "edge", "cli")
"""The parts that drive protocol SDKs (mcp, a2a-sdk, starlette, uvicorn)."""


def test_private_sdk_internals_are_read_only_in_the_sdk_modules() -> None:
    own = own_private_attributes()
    outside: dict[str, list[str]] = {}
    for path in sorted(p for part in SDK_USERS for p in (SRC / part).rglob("*.py")):
        if str(path.relative_to(SRC)) in PRIVATE_MODULES:
            continue
        found = sdk_internals_read(path.read_text(), own)
        if found:
            outside[str(path.relative_to(SRC))] = found
    assert outside == {}
    private = sorted(
        str(p.relative_to(SRC)) for p in SRC.rglob("_*.py") if not p.name.startswith("__")
    )
    assert private == sorted(PRIVATE_MODULES)
    for module, upgrade_test in PRIVATE_MODULES.items():
        source = (SRC / module).read_text()
        # each reaches something: a private attribute or a protocol object
        assert sdk_internals_read(source, own) or protocol_reaches(source, "?"), module
        assert (ROOT / upgrade_test).is_file()


def test_a_librarys_protocol_objects_are_reached_only_in_its_private_module() -> None:
    outside: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        module = str(path.relative_to(SRC))
        found = protocol_reaches(path.read_text(), module)
        if found:
            outside[module] = found
    assert outside == {}


def test_the_protocol_check_sees_a_reach_without_an_underscore() -> None:
    cases = [
        "from uvicorn.protocols.http.h11_impl import H11Protocol",
        "import uvicorn\nclass S(uvicorn.Server): pass",
        "import httptools",
        "import h11\nx = h11.Connection",
        "from mcp.server.streamable_http import check_accept_headers",
        "from mcp.server._streamable_http_modern import handle_modern_request",
        "from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher",
        "import uvicorn\nuvicorn.protocols.utils.get_path_with_query_string",
    ]
    for source in cases:
        assert protocol_reaches(source, "edge/guard.py"), source
    fine = "import uvicorn\nconfig = uvicorn.Config(app)\nfrom mcp.server.runner import serve_one"
    assert protocol_reaches(fine, "edge/guard.py") == []
    uvicorn_reach = "from uvicorn.protocols.http.h11_impl import H11Protocol"
    assert protocol_reaches(uvicorn_reach, "edge/_uvicorn.py") == []
    assert protocol_reaches(uvicorn_reach, "adapters/mcp/_sdk.py") != []  # not its library


def test_the_internals_check_sees_a_private_read() -> None:
    source = "def f(ctx):\n    a = ctx.session._connection\n    return getattr(a, '_x', None)\n"
    assert sdk_internals_read(source, set()) == ["2: ._connection", "3: getattr(..., '_x')"]
    assert sdk_internals_read(source, {"_connection", "_x"}) == []  # our own attributes
    assert (
        sdk_internals_read("def f(self):\n    return self._x, getattr(f, '__name__')\n", set())
        == []
    )


# -- tests that need Node or Chromium are marked ------------------------------------------------

PEER_SIGNS = ("INTEROP", "tests.support.browser", "playwright", '"node"', "npx")


def test_every_test_needing_node_or_chromium_carries_a_marker() -> None:
    unmarked: list[str] = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if "node_modules" in path.parts or path.name == Path(__file__).name:
            continue
        text = path.read_text()
        if not any(sign in text for sign in PEER_SIGNS):
            continue
        if "pytest.mark.interop" not in text and "pytest.mark.browser" not in text:
            unmarked.append(str(path.relative_to(ROOT)))
    assert unmarked == []
