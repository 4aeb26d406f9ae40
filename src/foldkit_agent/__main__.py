"""``python -m foldkit_agent`` runs the ``foldkit-agent`` command."""

from .cli import main

main()
