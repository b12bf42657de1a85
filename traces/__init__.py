"""Real DDP traces, in one package: format, loading, profiler import, fit, prediction, export.

The core modules use numpy and the standard library only; ``recorder/`` is the
one optional part that imports torch (the ``trace`` extra).

- ``schema`` (``schema_v1.json``, ``schema_v2.json``): the format's versions,
  the JSON Schema and validation with errors naming the field;
- ``load``: size-limited parsing into a ``Trace`` of arrays;
- ``trim``: a trace's quietest iterations and the rounds timed alone beside them;
- ``measure``: per-iteration quantities in the schedule model's terms;
- ``fit``: backward per layer, contention, transfer overhead and bandwidth
  (from all-reduces and backward timed alone when the trace has them), and the
  plain baseline without contention; its parts: ``fit_record`` (the ``Fit``
  record and its reported ``TERMS``), ``fit_quality``, ``fit_observations``
  (what is read off the traces), ``fit_backward``, ``fit_transfers``,
  ``fit_isolated`` (the terms timed alone) and ``fit_contention`` (one
  contention for both directions, matched with ``predict``);
- ``bootstrap``: 90 % intervals of the fitted terms over iterations;
- ``identify``: whether a fit can predict a layout, and why not;
- ``predict``: a layout's step from a fit, by ``widgets.model.ranks``, beside
  what was measured;
- ``chrome``: export to the Chrome trace event format;
- ``profiler_read``, ``profiler_events``, ``profiler_match``, ``profiler_sizes``,
  ``profiler_steps``, ``profiler``, ``profiler_convert``: torch.profiler files
  (one per rank, gzipped or not) read as data, measured, and made a trace;
- ``summary``: per iteration and rank the buckets, ends, tail and overlap;
- ``upload``: reading an upload's files (a trace, or profiler files);
- ``shipped/``: example traces of real runs; ``commands/``: the ``overlap-lab``
  trace commands; ``recorder/``: the torch-side recorder.
"""

from __future__ import annotations

from .bootstrap import resample_trace
from .chrome import to_chrome_trace
from .fit import fit
from .fit_quality import FitQuality
from .fit_record import TERMS, Fit, term_values
from .identify import PredictionRefused, check_predictable, refusal
from .load import (
    MAX_TRACE_BYTES,
    Trace,
    from_document,
    load_trace,
    parse_trace,
    write_trace,
)
from .measure import QUANTITIES, Measured, Summary, measure, quiet_iterations, summarize
from .predict import Prediction, buckets_for_cap, compare, error_pct, predict_layout
from .schema import (
    FORMAT,
    VERSION,
    TraceError,
    check_consistency,
    check_schema,
    schema,
    validate_trace,
)
from .trim import keep_quietest

__all__ = [
    "FORMAT",
    "MAX_TRACE_BYTES",
    "QUANTITIES",
    "TERMS",
    "VERSION",
    "Fit",
    "FitQuality",
    "Measured",
    "Prediction",
    "PredictionRefused",
    "Summary",
    "Trace",
    "TraceError",
    "buckets_for_cap",
    "check_consistency",
    "check_predictable",
    "check_schema",
    "compare",
    "error_pct",
    "fit",
    "from_document",
    "keep_quietest",
    "load_trace",
    "measure",
    "parse_trace",
    "predict_layout",
    "quiet_iterations",
    "refusal",
    "resample_trace",
    "schema",
    "summarize",
    "term_values",
    "to_chrome_trace",
    "validate_trace",
    "write_trace",
]
