"""Record real DDP runs as traces (needs the ``trace`` extra: ``pip install 'overlap-lab[trace]'``).

``recorder.TraceRecorder`` goes into any DDP script; ``demo`` runs the
12-layer demo model on 2 gloo ranks for ``overlap-lab record``. Nothing here is
imported by the server or by ``widgets``: only these modules import torch.
"""
