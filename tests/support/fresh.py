"""Run Python in a fresh process: for what only a process's first import shows (a global
that is read once, a provider set after a runtime was bound)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT


def fresh_python_lines(code: str) -> list[str]:
    """The lines ``code`` prints, run by this interpreter in a new process at the repository
    root with no ``OTEL_*`` variables (so the environment configures no tracer provider).

    Raises:
        subprocess.CalledProcessError: the process exited non-zero.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.splitlines()


def _core_distributions() -> set[str]:
    """The distributions a core install (``pip install foldkit-agent``) brings: the
    project's own dependencies and theirs, without any extra."""
    import importlib.metadata
    import tomllib

    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    todo = [Requirement(spec) for spec in project["dependencies"]]
    seen: set[str] = set()
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = req.name.lower().replace("_", "-")
        if name in seen:
            continue
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # a dependency of this platform only, or a backport not needed here
        seen.add(name)
        todo.extend(Requirement(spec) for spec in dist.requires or ())
    return seen


def core_only_python(where: Path) -> Path:
    """A fresh venv in ``where`` (no system site-packages) that can import only
    foldkit-agent's core: this checkout's ``src`` and its core dependencies, linked from this
    interpreter's own site-packages, none of any extra. Returns its ``python``.

    This is ``pip install foldkit-agent`` without the network: what a user has before
    installing an extra.
    """
    import importlib.metadata
    import venv

    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(where)
    lib = where / "core-libs"
    lib.mkdir()
    for name in _core_distributions():
        dist = importlib.metadata.distribution(name)
        for file in dist.files or ():
            top = file.parts[0]
            if top.endswith(".pth") or top == ".." or (lib / top).exists():
                continue
            source = Path(str(dist.locate_file(top)))
            if source.exists():
                (lib / top).symlink_to(source)
    (site,) = where.glob("lib/python*/site-packages")
    (site / "foldkit-core.pth").write_text(f"{ROOT / 'src'}\n{lib}\n")
    return where / "bin" / "python"
