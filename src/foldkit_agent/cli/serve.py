"""Commands registered by this module are added as the feature lands."""

from __future__ import annotations

from . import app as app
