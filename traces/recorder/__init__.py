"""Record real DDP runs as traces (needs the ``trace`` extra: ``pip install 'overlap-lab[trace]'``).

``recorder.TraceRecorder`` goes into any DDP script; ``demo`` runs the
12-layer demo model on 2 gloo ranks for ``overlap-lab record``. This is the one
part of ``traces`` that imports torch, and nothing outside it imports
it: the server, the widgets and the other trace modules never load torch
(``tests/trace/test_no_torch.py``).
"""
