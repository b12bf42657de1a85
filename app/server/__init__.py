"""How ``overlap-lab serve`` serves: options, process settings, the page gate, routes, hooks.

Everything here is serving machinery, the same for every page; what a page
shows is built in :mod:`app.pages` and :mod:`app.classroom`.
"""
