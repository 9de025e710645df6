"""The HTML comparison report: one self-contained page from result (and stats) documents.

    write([document, ...], "report.html")                  # result and/or stats documents, mixed
    write([result_document], "report.html", stats=[stats_document])
    render(documents) -> str

The page reads only documents: result documents (schema "rngcheck-result", see
``results.document``), statistics documents (schema "rngcheck-stats", see
``stats.battery``) and results journals (the JSON Lines file a run writes case by case,
read with ``results.journal``; a journal without its end line renders as an incomplete
report). Several result documents (other runs, machines, drivers) become columns of one
comparison; a backend name that occurs in several documents is told apart by its run.

Safety: the page has no script and no external resource (inline CSS, inline SVG, a
Content-Security-Policy that forbids everything else); every string from a document goes
through Jinja2's autoescape. A document of a newer schema version, not JSON, or not an
rngcheck document is refused with one line (RngcheckError); a truncated journal, an
interrupted run (``complete`` false) or missing fields give a report marked incomplete.

The page is made in five places, one job each: ``reports.fields`` (a document's fields as safe
text), ``reports.model`` (the comparison model: ``build``), ``reports.failures`` (a backend's
failures, their groups and their pictures), ``reports.statsview`` (a statistics document's view)
and this module (reading the documents and rendering the template). ``build``,
``p_text``, ``visible``, ``read`` and ``sources_of`` are re-exported here, as before the split.
"""

from __future__ import annotations

import functools
from pathlib import Path

from ..errors import RngcheckError
from ..jsonfile import atomic_write
from ..results.sources import STATS_SCHEMA, Source, classify, read, sources_of
from ..results.statuses import STATUSES
from ..results.text import shown, visible
from .fields import TEXT_LIMIT, p_text
from .model import DETAILED_FAILURES, MISMATCH_ROWS, UNDIAGNOSED, build

__all__ = ["DETAILED_FAILURES", "MISMATCH_ROWS", "STATS_SCHEMA", "STATUSES", "TEMPLATE", "TEXT_LIMIT", "UNDIAGNOSED",
           "Source", "build", "classify", "p_text", "read", "render", "render_model", "sources_of", "template",
           "visible", "write", "write_text"]

TEMPLATE = "report.html.j2"


# ---------------------------------------------------------------------------------------
# Rendering.
# ---------------------------------------------------------------------------------------

def _environment():
    try:
        import jinja2
    except ImportError:
        raise RngcheckError("the HTML report needs Jinja2 (a dependency of rngcheck): pip install Jinja2") from None
    from markupsafe import Markup

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "templates")),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True, finalize=shown)
    # Only the figures (SVG that matplotlib wrote from numbers and escaped labels) are trusted markup.
    env.filters["svg"] = lambda figure: Markup(figure["svg"]) if figure and figure.get("svg") else ""
    return env


def render(documents, stats=None) -> str:
    """The report's HTML text; ``documents`` (and ``stats``) are dicts, paths or Sources, mixed."""
    sources = sources_of(list(documents) + list(stats or []))
    if not sources:
        raise RngcheckError("no document to report on")
    return render_model(build(sources))


@functools.cache
def template():
    """The report's template, compiled once per process (a report of many documents, or a test
    rendering hundreds, compiles it once)."""
    return _environment().get_template(TEMPLATE)


def render_model(model: dict) -> str:
    """The HTML text of a model from ``build``."""
    return template().render(**model)


def write(documents, path, stats=None) -> None:
    """Write the report for result and/or stats documents (mixed) to ``path``."""
    write_text(path, render(documents, stats))


def write_text(path, text: str) -> None:
    """Write a report file whole (``jsonfile.atomic_write``), or raise RngcheckError."""
    atomic_write(Path(path), text)
