"""The studio: a local, read-only web page showing a workflow, its findings, its runs
and its changes (``stepswitch studio``). Not API: the command is the surface.

:mod:`~stepswitch.studio.page` builds the page's data (a JSON document: the diagrams as
SVG, every agent's declaration, the findings, a recorded run cut into turns, a diff), in
a child process so a reload re-imports the user's edited file from scratch;
:mod:`~stepswitch.studio.server` serves it with the assets under ``static/`` (no CDN:
the page works offline and makes no request beyond 127.0.0.1).
"""
