"""The course as static files: every page with the states the live server would send."""
