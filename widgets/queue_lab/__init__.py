"""The fluid queue lab: its component (Python) and what the page draws (``queue_lab.js``)."""
