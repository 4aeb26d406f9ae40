"""A missing extra is answered in one line that names the extra to install, from the
command and from every import of a part that needs one (foldkit_agent.errors.EXTRAS is the
one home of which extra installs what); run in a venv with only the core installed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from foldkit_agent.errors import EXTRAS, MissingExtra, needs_extra
from tests.support.fresh import core_only_python
from tests.support.paths import ROOT


@pytest.fixture(scope="module")
def core_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return core_only_python(tmp_path_factory.mktemp("core-venv"))


def _run(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["PYTHONPATH"] = str(ROOT / "src")  # this checkout's code, whichever venv runs it
    return subprocess.run(
        [str(python), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_core_alone_imports_the_front_door_and_declares_a_contract(core_python: Path) -> None:
    done = _run(core_python, "-c", "import foldkit_agent, examples.todo; print('ok')")
    assert (done.returncode, done.stdout, done.stderr) == (0, "ok\n", "")


CONSOLE_SCRIPT = "import sys; from foldkit_agent.__main__ import main; sys.exit(main())"
"""What the installed ``foldkit-agent`` script runs (``[project.scripts]``)."""


@pytest.mark.parametrize(
    "command",
    [
        ("-m", "foldkit_agent"),
        ("-m", "foldkit_agent.cli"),
        ("-c", CONSOLE_SCRIPT, "foldkit-agent"),
    ],
    ids=["python -m foldkit_agent", "python -m foldkit_agent.cli", "foldkit-agent"],
)
def test_the_command_without_the_cli_extra_says_which_extra_in_one_line(
    core_python: Path, command: tuple[str, ...]
) -> None:
    done = _run(core_python, *command, "serve", "examples.todo:runtime")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: the 'cli' extra is needed for the foldkit-agent command: "
        "pip install 'foldkit-agent[cli]' (no module named 'typer')\n"
    )


@pytest.mark.parametrize(
    ("module", "extra"),
    [
        ("foldkit_agent.adapters.mcp", "mcp"),
        ("foldkit_agent.adapters.a2a", "a2a"),
        ("foldkit_agent.adapters.web", "web"),
        ("foldkit_agent.adapters.native", "web"),
        ("foldkit_agent.adapters.pydantic_ai", "pydantic-ai"),
        ("foldkit_agent.adapters.openai_agents", "openai-agents"),
        ("foldkit_agent.adapters.langchain", "langchain"),
        ("foldkit_agent.edge", "web"),
    ],
)
def test_each_adapter_imported_without_its_extra_names_that_extra_in_its_last_line(
    core_python: Path, module: str, extra: str
) -> None:
    done = _run(core_python, "-c", f"import {module}")
    last = done.stderr.splitlines()[-1]
    assert done.returncode == 1
    assert last.startswith(f"foldkit_agent.errors.MissingExtra: the {extra!r} extra is needed")
    assert f"pip install 'foldkit-agent[{extra}]'" in last
    assert "During handling" not in done.stderr  # the library's own error is not chained


def test_http_app_imported_from_the_mcp_adapter_without_anyio_names_the_mcp_extra(
    core_python: Path,
) -> None:
    done = _run(core_python, "-c", "from foldkit_agent.adapters.mcp import http_app")
    assert done.stderr.splitlines()[-1] == (
        "foldkit_agent.errors.MissingExtra: the 'mcp' extra is needed for the MCP adapter: "
        "pip install 'foldkit-agent[mcp]' (no module named 'anyio')"
    )


def test_serve_webmcp_without_sse_starlette_names_an_extra_not_only_the_module() -> None:
    # sse_starlette comes with the mcp extra as well as the web one, and the MCP adapter is
    # the first part serve opens, so its extra is the one named
    code = (
        "import sys; sys.modules['sse_starlette'] = None\n"
        "sys.argv = ['foldkit-agent', 'serve', 'examples.todo:runtime', '--mcp', 'http', "
        "'--webmcp', '--port', '0']\n"
        "from foldkit_agent.__main__ import main; main()\n"
    )
    done = _run(Path(sys.executable), "-c", code)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: the 'mcp' extra is needed for the MCP adapter: pip install "
        "'foldkit-agent[mcp]' (no module named 'sse_starlette')\n"
    )


def test_serve_auth_issuer_without_joserfc_names_the_oauth_extra() -> None:
    code = (
        "import sys; sys.modules['joserfc'] = None\n"
        "sys.argv = ['foldkit-agent', 'serve', 'examples.todo:runtime', '--mcp', 'http', "
        "'--auth-issuer', 'http://localhost:9', '--audience', 'http://127.0.0.1:9/mcp', "
        "'--port', '0']\n"
        "from foldkit_agent.__main__ import main; main()\n"
    )
    done = _run(Path(sys.executable), "-c", code)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: the 'oauth' extra is needed for OAuth tokens (OAuthVerifier, serve "
        "--auth-issuer): pip install 'foldkit-agent[oauth]' (no module named 'joserfc')\n"
    )


def test_a_missing_module_of_our_own_is_a_bug_and_passes_unchanged() -> None:
    with pytest.raises(ModuleNotFoundError) as caught, needs_extra("foldkit_agent.edge"):
        import foldkit_agent.no_such_part  # type: ignore[import-not-found]  # noqa: F401
    assert not isinstance(caught.value, MissingExtra)


def test_the_outermost_part_names_its_extra() -> None:
    with pytest.raises(MissingExtra) as caught:
        with needs_extra("foldkit_agent.adapters.mcp"), needs_extra("foldkit_agent.edge"):
            raise ModuleNotFoundError("x", name="starlette")
    assert (caught.value.extra, caught.value.name) == ("mcp", "starlette")


def test_every_extra_the_table_names_is_an_extra_of_the_project() -> None:
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = set(declared["optional-dependencies"])
    named = {e for extra, _ in EXTRAS.values() for e in extra.split(",")}
    assert named <= extras, named - extras
