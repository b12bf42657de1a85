"""The Panel and Bokeh internals only the benchmarks use, each in one place, for a stated reason.

Like the product's own (``app/server/panel_internals.py``), each is exercised
by ``tests/app/test_panel_internals.py`` against the installed versions.
"""

from __future__ import annotations

from typing import Any


def views_of(doc: Any) -> list[Any]:
    """The Panel objects rendered into ``doc`` (the benchmarks count a page's parts).

    Why: Panel records each rendered view in a private registry and has no
    public way to list a document's.
    """
    from panel.io.state import state

    return [pane for pane, _root, vdoc, _comm in list(state._views.values()) if vdoc is doc]


def build_session_page(session: Any, resources: Any) -> str:
    """The HTML page Panel serves for ``session`` (the benchmarks time this stage alone).

    Why: Panel renders a session's page inside its request handler; this is
    the function it calls, which Panel does not export.
    """
    from panel.io.server import server_html_page_for_session

    doc = session.document
    return server_html_page_for_session(
        session,
        resources=resources,
        title=doc.title,
        token=session.token,
        template=doc.template,
        template_variables=doc.template_variables,
    )


def tornado_application(server: Any) -> Any:
    """The ``BokehTornado`` application of a Bokeh ``Server`` made by ``pn.serve(start=False)``.

    Why: the session benchmarks build sessions of a route directly from its
    application context, which only the Tornado application lists.
    """
    return server._tornado
