"""Where things are, for tests that run files or commands from the checkout."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository root (where the README, Makefile and examples live)."""

INTEROP = ROOT / "tests" / "interop"
"""The Node interop peers (``make node`` installs them here)."""
