"""The project's own files keep their promises: the sdist lists only files that exist (the MIT
LICENSE among them), ruff excludes only paths that exist, every package src imports is
declared, each in-process framework's extra pins the one minor release the suite runs
against, and the Makefile's fast loop and Chromium check need neither peers nor root."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from typing import Any

from packaging.requirements import Requirement
from packaging.version import Version

from tests.support.paths import ROOT

PYPROJECT: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_sdist_includes_only_files_that_exist_and_the_mit_license_is_one() -> None:
    include: list[str] = PYPROJECT["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    assert "LICENSE" in include
    assert [p for p in include if not (ROOT / p).exists()] == []
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 foldkit-agent contributors" in text
    assert PYPROJECT["project"]["license"] == "MIT"


def test_ruff_excludes_only_paths_that_exist() -> None:
    excluded: list[str] = PYPROJECT["tool"]["ruff"]["extend-exclude"]
    assert [p for p in excluded if not (ROOT / p).exists()] == []


def _requirement_names(specs: list[str]) -> set[str]:
    return {re.split(r"[\[<>=!~; ]", s, maxsplit=1)[0].lower().replace("_", "-") for s in specs}


def test_every_package_src_imports_is_declared_outside_the_dev_extra() -> None:
    project = PYPROJECT["project"]
    declared = _requirement_names(project["dependencies"])
    for extra, specs in project["optional-dependencies"].items():
        if extra != "dev":
            declared |= _requirement_names(specs)
    distributions = importlib.metadata.packages_distributions()
    undeclared: dict[str, list[str]] = {}
    for path in sorted((ROOT / "src" / "foldkit_agent").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                tops = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                tops = [node.module.split(".")[0]]
            else:
                continue
            for top in tops:
                if top in sys.stdlib_module_names or top in ("foldkit_agent", "examples"):
                    continue
                dists = {d.lower().replace("_", "-") for d in distributions.get(top, [])}
                if not dists & declared:
                    undeclared.setdefault(top, []).append(path.name)
    assert undeclared == {}


def _make(*args: str) -> subprocess.CompletedProcess[str]:
    make = shutil.which("make")
    assert make is not None, "make is needed to build and test this project"
    return subprocess.run(
        [make, "--no-print-directory", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_all_extra_brings_every_other_extra_so_the_suite_installs_each() -> None:
    extras: dict[str, list[str]] = PYPROJECT["project"]["optional-dependencies"]
    (everything,) = extras["all"]
    named = set(Requirement(everything).extras)
    assert set(extras) - {"all", "dev"} - named == set()


def test_make_unit_runs_the_suite_without_the_node_and_chromium_tests() -> None:
    planned = _make("-n", "unit")
    assert planned.returncode == 0, planned.stderr
    (pytest_line,) = [line for line in planned.stdout.splitlines() if "-m pytest" in line]
    assert '-m "not interop and not browser"' in pytest_line
    assert "FOLDKIT_NO_SKIP=1" in pytest_line  # what it does run allows no skips


def test_make_chromium_does_nothing_when_chromium_is_present() -> None:
    done = _make("-s", "chromium", f"CHROMIUM={sys.executable}")  # an executable that exists
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    recipe = (ROOT / "Makefile").read_text()
    advice = re.compile(r"run 'sudo apt-get install[^']*' and retry")
    assert "sudo" not in advice.sub("", recipe)  # sudo is only ever advised, never run


def test_make_wrk_does_nothing_when_wrk_is_present() -> None:
    done = _make("-s", "wrk", f"WRK={sys.executable}")  # an executable that exists
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_make_bench_and_the_suites_install_wrk_first() -> None:
    for target in ("bench", "test", "unit"):
        planned = _make("-n", target, "WRK=/nonexistent/wrk")
        assert "installing Debian's wrk" in planned.stdout, target


def test_make_bench_installs_nginx_and_postgresql_as_the_suites_do() -> None:
    """On a fresh machine make bench stopped at 'nginx is not installed: run make nginx'."""
    planned = _make("-n", "bench").stdout
    assert "installing Debian's nginx" in planned
    assert "installing Debian's postgresql" in planned


IN_PROCESS_EXTRAS = {
    "pydantic-ai": "pydantic-ai-slim",
    "openai-agents": "openai-agents",
    "langchain": "langchain-core",
}
"""Each in-process framework's extra and the distribution it pins."""


def test_each_in_process_extra_is_pinned_to_a_minor_range_the_suite_runs_against() -> None:
    extras: dict[str, list[str]] = PYPROJECT["project"]["optional-dependencies"]
    for extra, dist in IN_PROCESS_EXTRAS.items():
        (spec,) = [s for s in extras[extra] if Requirement(s).name == dist]
        requirement = Requirement(spec)
        assert requirement.name == dist
        bounds = {s.operator: Version(s.version) for s in requirement.specifier}
        assert set(bounds) == {">=", "<"}, spec
        low, high = bounds[">="], bounds["<"]
        assert (high.major, high.minor) == (low.major, low.minor + 1), f"{spec}: one minor"
        installed = importlib.metadata.version(dist)
        assert requirement.specifier.contains(installed), (extra, installed)


def test_the_wheel_ships_every_template_script_and_stylesheet_the_pages_load(tmp_path: Any) -> None:
    """The console's and the person's page's templates, their script and stylesheet and the
    WebMCP bridge are package data: a wheel built from the tree holds each of them."""
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("foldkit_agent-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = set(archive.namelist())
    src = ROOT / "src"
    data = sorted(
        p.relative_to(src).as_posix()
        for p in (src / "foldkit_agent").rglob("*")
        if p.is_file() and p.suffix in (".html", ".js", ".css")
    )
    assert "foldkit_agent/adapters/web/console/templates/page.html" in data
    assert "foldkit_agent/adapters/web/static/webmcp.js" in data
    assert [p for p in data if p not in shipped] == []
