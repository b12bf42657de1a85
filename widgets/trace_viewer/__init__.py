"""The real-trace viewer: its component (Python) and what the page draws (``trace_viewer.js``)."""
