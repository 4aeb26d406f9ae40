"""The ``foldkit-agent`` command's entry point (the console script and
``python -m foldkit_agent``): it imports the command, which needs the ``cli`` extra, only
here, so a core install is told in one line which extra to install."""

from __future__ import annotations

import sys

from .errors import MissingExtra


def main() -> None:
    """Run the ``foldkit-agent`` command; without the ``cli`` extra (or the extra a command
    needs), print one line naming it (``pip install 'foldkit-agent[cli]'``) and exit with
    status 2."""
    try:
        from .cli.root import main as run

        run()  # a command reaching a part whose extra is missing ends here too
    except MissingExtra as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
