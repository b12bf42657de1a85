"""Record real DDP runs as traces (needs the ``trace`` extra: ``pip install 'overlap-lab[trace]'``).

``recorder.TraceRecorder`` goes into any DDP script (``timing`` reads its
clocks, ``recording_metadata`` describes the run, ``trace_document`` makes the raw
records a trace, ``machine`` reads the load of other processes); ``isolated``
times all-reduces and backward alone; ``demo`` runs the 12-layer demo model on 2
gloo ranks for ``overlap-lab record``, ``profiled`` a smaller one beside
torch.profiler. This is the one part of ``traces`` that imports torch, and
nothing outside it imports it: the server, the widgets and the other trace modules never load torch
(``tests/trace/test_no_torch.py``).
"""
