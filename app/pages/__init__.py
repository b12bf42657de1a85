"""What the server shows: the page frame, a widget's and a lesson's page, the static pages.

Pages are built from what a route hands them (the query, this server's
address); none of them reads the request or knows how it is served
(:mod:`app.server`).
"""
