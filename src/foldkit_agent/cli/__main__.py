"""``python -m foldkit_agent.cli`` runs the ``foldkit-agent`` command."""

from . import main

main()
