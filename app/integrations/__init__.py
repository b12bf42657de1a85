"""Course-site tools: a Sphinx extension (Jupyter Book 1 too) and an MkDocs plugin.

Both place a widget on a course page in one block and write the static copy
the page's iframes load when the site is built (:mod:`app.integrations.embed_block`).
"""
