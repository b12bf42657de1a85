"""A real DDP trace beside the model: per-rank lanes, the fit, and a "what if" bucket cap.

Shows a shipped trace or an upload (an overlap-lab trace, or torch.profiler
files, one per rank, gzipped or not: see ``upload_message``), the median or one
recorded iteration, which rank defined each bucket's readiness, the model
fitted on the other traces drawn beside the measurement, the fit's numbers and
quality, and the model's prediction for another bucket cap with the measured
answer where a trace of that cap was recorded. It says what the run was and,
for a profile, what a profile cannot show and what that does to the fit. A
trace the model cannot be fitted to is drawn as measured, with the reason.

The page (``trace_viewer.js``) draws it all from ``state`` (``state.page_state``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import param

from traces import Trace, TraceError
from traces.upload import NAME_CHARS, Upload, load_upload_files

from ..common.component import WidgetComponent
from ..common.fields import field_specs
from ..common.widget_state import fitted_clock
from ..model.timeline import Clock
from .model import TraceViewConfig, TraceViewResult, shipped_traces
from .state import TraceRun, TraceState, set_range, upload_state
from .text import listing
from .upload_message import decode_files, files_in_words, read_in_background, server_document
from .upload_queue import Outcome, UploadRefused

HERE = Path(__file__).resolve().parent


class TraceView(WidgetComponent):
    """A recorded iteration on every rank, the fitted model beside it, and a what-if."""

    widget_name = "trace"
    settings_class = TraceViewConfig
    rules = TraceState()
    entry = HERE / "trace_viewer.js"
    #: The upload's button back to the chosen shipped trace.
    own_actions: ClassVar[Mapping[str, str]] = {"shipped": "show_shipped"}
    #: The upload control's one message: the chosen files.
    data_messages: ClassVar[Mapping[str, str]] = {"upload_files": "receive_files"}

    upload = param.Dict(
        default={}, doc="The upload control's limits, its message and the shown upload's name."
    )

    def __init__(self, **settings: Any):
        self.uploaded: Trace | None = None
        self._upload_count = 0
        super().__init__(**settings)
        self.upload = self._upload_state()

    # -- settings ------------------------------------------------------------------

    def make_clock(self) -> Clock:
        return Clock(horizon=1.0, step_size=1.0)

    def _settings_changed(self, *events: param.parameterized.Event) -> None:
        if any(e.name == "trace" for e in events):
            # Choosing a shipped trace replaces the upload.
            self.uploaded = None
            self._set_range(shipped_traces()[self.settings.trace].n_iterations)
            self.upload = self._upload_state()
        self.refresh()

    def _set_range(self, n: int) -> None:
        """Bound the iteration by ``n`` recorded iterations (the median when past them)."""
        set_range(self.settings, n)
        self.fields = field_specs(self.settings)

    # -- the upload ------------------------------------------------------------------

    def receive_files(self, files: Any) -> None:
        """The page's upload message: its files checked, then read and shown, or refused.

        On a server the files are read off its event loop; in a notebook or a test,
        at once.
        """
        try:
            decoded = decode_files(files)
        except ValueError as exc:
            self._refuse(str(exc))
            return
        if decoded is None:
            return  # not what a page sends
        doc = server_document()
        if doc is None:
            self.load_files(decoded)
            return
        what = files_in_words([name for name, _ in decoded])
        try:
            ahead = read_in_background(decoded, doc, self._show_read)
        except UploadRefused as exc:
            self._refuse(str(exc))
            return
        del decoded
        if ahead:
            first = f"{ahead} upload{'s' * (ahead != 1)} first"
            status = f"Waiting to read {what}: the server reads {first}…"
            self.upload = self._upload_state(status=status)
        else:
            self.upload = self._upload_state(status=f"Reading {what}…")

    def _refuse(self, why: str) -> None:
        """Say why an upload was not loaded; the trace shown stays (a new answer each time)."""
        self._upload_count += 1
        self.upload = self._upload_state(error=f"Not loaded: {why}. The trace shown is unchanged.")

    def load_upload(self, data: bytes | str, filename: str) -> bool:
        """Parse one uploaded file and show it; on error keep the shown trace and say why."""
        raw = data.encode("utf-8", errors="surrogatepass") if isinstance(data, str) else data
        return self.load_files([((filename or "upload.json")[:NAME_CHARS], raw)])

    def _show_read(self, outcome: Outcome) -> None:
        if isinstance(outcome, str):
            self._refuse(outcome)
        else:
            self._show_upload(outcome)

    def load_files(self, files: list[tuple[str, bytes]]) -> bool:
        """Load an upload's files (one trace, or profiles) and show them; else say why.

        On any error the trace shown, the clock and everything drawn stay as they were.
        """
        try:
            upload = load_upload_files(files)
        except (TraceError, ValueError) as exc:
            self._refuse(str(exc))
            return False
        return self._show_upload(upload)

    def _show_upload(self, upload: Upload) -> bool:
        try:
            self.settings.result(uploaded=upload.trace)  # it must also be drawn
        except (TraceError, ValueError) as exc:
            self._refuse(str(exc))
            return False
        self._upload_count += 1
        trace = upload.trace
        self.uploaded = trace
        changed = self.settings.iteration > trace.n_iterations
        self._set_range(trace.n_iterations)
        if upload.kind == "profile":
            n = len(upload.files)
            status = (
                f"Showing your upload, {listing(upload.files)}: torch.profiler "
                f"file{'s' * (n != 1)} of {trace.n_ranks} rank{'s' * (trace.n_ranks != 1)}, "
                f"imported as a trace of {trace.n_iterations} iteration"
                f"{'s' * (trace.n_iterations != 1)}."
            )
        else:
            status = f"Showing your upload, {trace.name}."
        if changed:
            status += f" It has {trace.n_iterations} iterations: the median is shown."
        if upload.notes:
            notes = "; ".join(upload.notes)
            status += f" Import notes: {notes[:400]}{'…' * (len(notes) > 400)}."
        status += " A link to these settings shows the shipped trace; the upload stays here."
        self.upload = self._upload_state(status=status)
        self.reset_model()
        self._errors.clear()
        self.refresh()
        return True

    def show_shipped(self) -> None:
        """Back from an upload to the chosen shipped trace."""
        if self.uploaded is None:
            return
        self.uploaded = None
        self._set_range(shipped_traces()[self.settings.trace].n_iterations)
        self.upload = self._upload_state()
        self.reset_model()
        self.refresh()

    def _upload_state(self, status: str = "", error: str = "") -> dict:
        shown = self.uploaded.name if self.uploaded is not None else None
        return upload_state(shown, status, error, self._upload_count)

    # -- the model's result ------------------------------------------------------------

    def fit_to_model(self) -> None:
        self.run = TraceRun(self.settings, self.uploaded)
        fitted_clock(self.clock, self.run)

    @property
    def result(self) -> TraceViewResult:
        """The trace (shipped or uploaded) beside the fitted model."""
        return self.run.result

    @property
    def quantities(self) -> dict:
        """The step's quantities, measured and predicted."""
        return self.run.quantities
