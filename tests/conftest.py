"""Settings for every test: property tests are reproducible in CI.

Locally hypothesis draws new examples each run, which is how it finds new
cases; under CI (``CI`` set) it draws the same examples every time, with no
per-example deadline, so a result does not depend on the run or the load.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
