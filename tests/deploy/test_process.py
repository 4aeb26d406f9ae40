"""deploy.stack.Process: a child's standard error, read as it comes, keeping a bounded tail."""

from __future__ import annotations

import os
import sys

from deploy.stack import LINES_KEPT, Process


def test_f21_a_process_keeps_only_the_last_lines_of_its_standard_error() -> None:
    # issue 21: every line a worker wrote (a traceback per refused call) was kept forever
    script = (
        "import sys\nfor n in range(3000): print(n, file=sys.stderr)\n"
        "print('done', file=sys.stderr)"
    )
    child = Process([sys.executable, "-c", script], env=dict(os.environ), name="chatty")
    try:
        assert child.wait_for(r"^done$").group(0) == "done"
        assert child.proc.wait(30) == 0
    finally:
        child.stop()  # joins the reader: every line is in
    assert len(child.lines) == LINES_KEPT
    assert list(child.lines)[-2:] == ["2999", "done"]
