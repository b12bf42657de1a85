"""The bucket timeline: its component (Python) and what the page draws (``bucket_timeline.js``)."""
