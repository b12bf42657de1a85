"""The trace commands of ``overlap-lab``: ``record``, ``fit``, ``predict``, ``trim``, ``chrome``,
``import`` and ``summary``.

``app.cli`` adds them to its parser and runs them; only ``record`` needs torch,
and only in the worker processes it starts.
"""

from __future__ import annotations

from .recorded import add_trace_commands, run_trace_command

__all__ = ["add_trace_commands", "run_trace_command"]
