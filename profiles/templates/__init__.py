"""HTML templates and stylesheet of the offline report and the index (see :mod:`profiles.report`).

Every page is ``page.html`` (the head: charset, viewport, the Content-Security-Policy
that keeps a page free of scripts and of anything fetched, the inline stylesheet
``report.css``) around one body template: ``report.html`` or ``index.html``.
"""

from __future__ import annotations

from importlib import resources
from string import Template


def _text(name: str) -> str:
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def render_page(body: str, title: str, /, **fields: object) -> str:
    """The body template ``body`` filled with ``fields``, in the page titled ``title`` (HTML, escaped)."""
    return Template(_text("page.html")).substitute(
        title=title, css=_text("report.css"), body=Template(_text(body)).substitute(fields)
    )
