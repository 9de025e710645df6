"""Figures of the HTML report: matplotlib (the SVG backend, nothing fetched), binned in numpy.

Every function returns one ``<svg>`` element as text, ready to be inlined in the page:
no XML declaration, no DOCTYPE, ids made unique per figure (several figures share one
page, and matplotlib's ids such as ``p1a2b3c4d5`` or ``patch_1`` would collide), text
kept as ``<text>`` (``svg.fonttype = "none"``: small, and no font is embedded or loaded).
Labels that come from documents (backend names) are made safe for mathtext and
truncated; matplotlib's SVG writer escapes them as XML text.
"""

from __future__ import annotations

import io
import itertools
import math
import re
from html import escape

import numpy as np

LANES, BITS = 4, 32
STATUS_COLOURS = {"passed": "#2e7d32", "failed": "#c62828", "error": "#6a1b9a", "crashed": "#4a148c",
                  "timeout": "#e65100", "info": "#1565c0", "n/a": "#cfd8dc",
                  "skipped": "#9e9e9e"}
_counter = itertools.count(1)


# The most lane panels one figure draws (a battery's main stream has three lanes tests: frequency, lag1,
# lag4); a document naming thousands of them drew thousands of panels, for minutes.
LANE_PANELS = 8


class Undrawable(ValueError):
    """A document's numbers that no figure can show (an infinite z-score, a threshold that is not a
    probability): the page says why in the figure's place."""


def draw(name: str, *args) -> dict:
    """An inline SVG figure (``name``: one of the functions below, called with ``args``) as the
    page's model holds it: {"svg": text, "error": None}, or the reason it could not be drawn
    (matplotlib missing, or numbers in the document that no figure shows: Undrawable, or any other
    value matplotlib refuses)."""
    try:
        return {"svg": globals()[name](*args), "error": None}
    except ImportError as error:
        return {"svg": None, "error": f"figures need matplotlib ({error})"}
    except Undrawable as error:
        return {"svg": None, "error": f"not drawn: {error}"}
    except (ValueError, ArithmeticError) as error:   # a document's value matplotlib cannot place
        return {"svg": None, "error": f"not drawn: the document's numbers cannot be plotted ({error})"}


def _figure(width: float, height: float, rows: int = 1):
    """A Figure without pyplot: no global backend is chosen, no GUI is touched."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    axes = fig.subplots(rows, 1, squeeze=False)
    return fig, axes[:, 0]


def _rc():
    return {
        "svg.fonttype": "none",          # text as <text>: no glyph paths, no font files
        "svg.hashsalt": "rngcheck",      # deterministic clip-path ids
        "font.family": "sans-serif",
        "font.sans-serif": ["DejaVu Sans", "Liberation Sans", "Arial", "Helvetica"],
        "font.size": 9,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "figure.dpi": 72,
        "path.simplify": True,
    }


def label(text, limit: int = 40) -> str:
    """A document string as a plot label: one line, no mathtext, at most ``limit`` characters."""
    text = "".join(c if c.isprintable() else "?" for c in str(text))
    if len(text) > limit:
        text = text[:limit - 1] + "\u2026"
    return text.replace("$", r"\$")


_ID = re.compile(r'\sid="([^"]+)"')
_REFERENCE = re.compile(r'(?:url\(#|href="#)([^")]+)')
_GEOMETRY = re.compile(r'\b(d|x|y|width|height|transform|points|viewBox)="([^"]*)"')
_DECIMALS = re.compile(r"(\d+\.\d\d)\d+")


_FONT = re.compile(r"\s*font-family: [^;\"]*;?")      # every text's: the page's style sets it once (FONT_FAMILY)
_NO_ROTATION = re.compile(r' transform="rotate\(-?0 [^")]*\)"')
_TAG_G = re.compile(r"<g\b[^>]*>|</g>")
_USE = re.compile(r'<use xlink:href="#([^"]+)"([^>]*?) style="([^"]*)"')
_DEFINED_STYLE = re.compile(r'<path id="([^"]+)"[^>]*? style="([^"]*)"')
FONT_FAMILY = "'DejaVu Sans', 'Liberation Sans', Arial, Helvetica, sans-serif"   # the figures' text (style.css.j2)


def _unwrap_groups(svg: str) -> str:
    """Drop every <g> without attributes (and its </g>): matplotlib nests them deeply, for nothing."""
    kept: list[bool] = []

    def one(match: re.Match[str]) -> str:
        tag = match.group(0)
        if tag == "</g>":
            return tag if kept.pop() else ""
        kept.append(tag != "<g>")
        return tag if kept[-1] else ""

    return _TAG_G.sub(one, svg)


_CLIPPED = re.compile(r'<path d="([^"]*)" clip-path="(url\(#[^)]+\))" style="([^"]*)"/>')


def _merge_runs(svg: str) -> str:
    """Adjacent paths with the same clip and style (the bars of a chart) as one group that carries them."""
    out: list[str] = []
    run: list[re.Match[str]] = []   # the matches of the current run
    at = 0

    def flush() -> None:
        if len(run) > 1:
            _, clip, style = run[0].groups()
            out.append(f'<g clip-path="{clip}" style="{style}">'
                       + "".join(f'<path d="{m.group(1)}"/>' for m in run) + "</g>")
        elif run:
            out.append(run[0].group(0))
        run.clear()

    for match in _CLIPPED.finditer(svg):
        if run and (match.start() != run[-1].end() or match.groups()[1:] != run[0].groups()[1:]):
            flush()
        if not run:
            out.append(svg[at:match.start()])
        run.append(match)
        at = match.end()
    flush()
    out.append(svg[at:])
    return "".join(out)


def _compact(svg: str) -> str:
    """What the picture does not need: the font family on every text (the page sets it), a rotation
    by 0, groups without attributes, a clip and style repeated on adjacent paths, and a <use>'s style
    that repeats the one of the path it uses."""
    svg = _FONT.sub("", svg)
    svg = _NO_ROTATION.sub("", svg)
    svg = _unwrap_groups(svg)
    svg = _merge_runs(svg)
    defined = dict(_DEFINED_STYLE.findall(svg))
    return _USE.sub(lambda m: m.group(0) if defined.get(m.group(1)) != m.group(3)
                    else f'<use xlink:href="#{m.group(1)}"{m.group(2)}', svg)


def _inline(svg: str, prefix: str, title: str = "") -> str:
    """Strip the prolog and metadata, keep only referenced ids (prefixed: several figures
    share a page), shorten geometry (2 decimals of a point are plenty), whitespace and what
    the picture does not need (:func:`_compact`)."""
    start = svg.find("<svg")
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg[start:], count=1, flags=re.S)
    referenced = set(_REFERENCE.findall(svg))
    svg = _ID.sub(lambda m: f' id="{prefix}-{m.group(1)}"' if m.group(1) in referenced else "", svg)
    svg = _REFERENCE.sub(lambda m: m.group(0).replace("#" + m.group(1), f"#{prefix}-{m.group(1)}"), svg)
    svg = _GEOMETRY.sub(lambda m: f'{m.group(1)}="' + " ".join(_DECIMALS.sub(r"\1", m.group(2)).split()) + '"', svg)
    svg = re.sub(r">\s+<", "><", svg)
    svg = _compact(svg)
    svg = svg.replace("<svg ", f'<svg class="figure" role="img" aria-label="{escape(title, quote=True)}" '
                               f'data-figure="{prefix}" ', 1)
    return svg.strip()


def _render(fig, title: str) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    return _inline(buffer.getvalue(), f"fig{next(_counter)}", title)


def _grid_lines(ax, xs, ys, x_range: tuple[float, float], y_range: tuple[float, float], width: float) -> None:
    """White lines at ``xs`` (vertical) and ``ys`` (horizontal), drawn as one path (one SVG element,
    not one per line)."""
    px: list[float] = []
    py: list[float] = []
    for x in xs:
        px += [x, x, math.nan]
        py += [y_range[0], y_range[1], math.nan]
    for y in ys:
        px += [x_range[0], x_range[1], math.nan]
        py += [y, y, math.nan]
    if px:
        ax.plot(px, py, color="white", linewidth=width, solid_capstyle="butt")


def status_bars(columns: list[str], counts: list[dict]) -> str:
    """Horizontal stacked bars: one per backend column, the share of each status."""
    import matplotlib

    with matplotlib.rc_context(_rc()):
        height = 0.55 + 0.32 * len(columns)
        fig, (ax,) = _figure(7.2, height)
        y = np.arange(len(columns))[::-1]
        left = np.zeros(len(columns))
        for status, colour in STATUS_COLOURS.items():
            values = np.array([c.get(status, 0) for c in counts], dtype=float)
            if not values.any():
                continue
            ax.barh(y, values, left=left, color=colour, height=0.6, label=status)
            left += values
        ax.set_yticks(y, [label(c, 28) for c in columns])
        ax.set_xlabel("cases")
        if left.any():
            ax.legend(ncol=5, fontsize=8, frameon=False, loc="lower center", bbox_to_anchor=(0.5, 1.0))
        ax.set_xlim(0, max(1.0, float(left.max())))
        return _render(fig, "cases of each status, per backend")


def pvalue_histogram(series: dict[str, list[float]], bins: int = 20) -> str:
    """Histogram of p-values on [0, 1] (stacked by series) against the uniform expectation."""
    import matplotlib

    edges = np.linspace(0.0, 1.0, bins + 1)
    with matplotlib.rc_context(_rc()):
        fig, (ax,) = _figure(7.2, 2.6)
        bottom = np.zeros(bins)
        total = 0
        palette = ["#1565c0", "#90caf9", "#ef6c00", "#ffcc80", "#2e7d32", "#a5d6a7"]
        for (name, values), colour in zip(series.items(), itertools.cycle(palette)):
            values = np.clip(np.asarray([v for v in values if v == v], dtype=float), 0.0, 1.0)
            counts, _ = np.histogram(values, bins=edges)
            total += int(counts.sum())
            ax.bar(edges[:-1], counts, width=1.0 / bins, bottom=bottom, align="edge", color=colour,
                   edgecolor="white", linewidth=0.5, label=f"{label(name)} ({int(counts.sum())})")
            bottom += counts
        if total:
            ax.axhline(total / bins, color="#333333", linestyle="--", linewidth=1, label="uniform expectation")
        ax.set_xlim(0, 1)
        ax.set_xlabel("p-value")
        ax.set_ylabel("results")
        if total:
            ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        return _render(fig, "histogram of p-values against the uniform expectation")


def _grid_of(entry) -> np.ndarray | None:
    """A 4 x 32 table of z-scores carried by a lanes result, if the document has one."""
    for key in ("z", "z_cells", "cells"):
        value = entry.get(key)
        if isinstance(value, dict):
            value = value.get("z")
        try:
            grid = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            continue
        if grid.shape == (LANES, BITS):
            return grid
        if grid.size == LANES * BITS:
            return grid.reshape(LANES, BITS)
    return None


def lane_bias(tables: list[dict]) -> str:
    """The (Philox lane x bit position) picture, one panel per table.

    ``tables``: [{"title", "grid": 4x32 z-scores or None, "worst": (lane, bit, z) or None}].
    With a grid every cell is drawn (colour = z); with only the worst cell (what the stats
    document records) that cell is marked and every other cell is known to be closer to 0.
    """
    import matplotlib
    import matplotlib.patches
    from matplotlib.colors import Normalize, SymLogNorm, TwoSlopeNorm

    tables, left_out = _lane_panels(tables)
    limit = max([4.0] + [_lane_extreme(table) for table in tables])
    with matplotlib.rc_context(_rc()):
        fig, axes = _figure(7.2, 0.3 + 1.45 * len(tables) + (0.3 if left_out else 0), rows=len(tables))
        fig.set_layout_engine("constrained")
        if left_out:
            fig.suptitle(f"{len(tables)} of {len(tables) + left_out} lanes tests drawn (the most biased); "
                         f"{left_out} left out", fontsize=8.5, x=0.01, ha="left")
        norm: Normalize
        if limit > 12:
            norm = SymLogNorm(linthresh=2.0, vmin=-limit, vmax=limit, base=10)
        else:
            norm = TwoSlopeNorm(vmin=-limit, vcenter=0.0, vmax=limit)
        cmap = matplotlib.colormaps["RdBu_r"]
        mesh = None
        bits, lanes = np.arange(BITS + 1) - 0.5, np.arange(LANES + 1) - 0.5
        for ax, table in zip(axes, tables):
            grid = table.get("grid")
            worst = table.get("worst")
            if grid is None:
                ax.set_facecolor("#f4f6f8")
            else:  # an embedded 4x32 image: far smaller than 128 vector cells
                mesh = ax.imshow(grid, cmap=cmap, norm=norm, aspect="auto", interpolation="nearest",
                                 extent=(-0.5, BITS - 0.5, LANES - 0.5, -0.5))
            _grid_lines(ax, bits[1:-1], lanes[1:-1], (-0.5, BITS - 0.5), (-0.5, LANES - 0.5), 0.6)
            if worst:
                lane, bit, z = int(worst[0]), int(worst[1]), float(worst[2])
                ax.add_patch(matplotlib.patches.Rectangle((bit - 0.5, lane - 0.5), 1, 1, facecolor=cmap(norm(z)),
                                                          edgecolor="black", linewidth=1.2))
                right = bit < 24
                ax.annotate(f"z = {z:+.2f}", (bit, lane), xytext=(bit + (0.8 if right else -0.8), lane),
                            ha="left" if right else "right", va="center", fontsize=8)
            ax.set_title(label(table["title"], 100), fontsize=8.5, loc="left")
            ax.set_yticks(range(LANES), [f"lane {i}" for i in range(LANES)])
            ax.set_xticks(range(0, BITS, 4))
            ax.set_xlim(-0.5, BITS - 0.5)
            ax.set_ylim(LANES - 0.5, -0.5)
            ax.tick_params(labelsize=8)
        axes[-1].set_xlabel("bit position (0 = least significant)")
        if mesh is None:
            from matplotlib.cm import ScalarMappable
            mesh = ScalarMappable(norm=norm, cmap=cmap)
        bar = fig.colorbar(mesh, ax=list(axes), fraction=0.03, pad=0.01, label="z")
        if bar.solids is not None:
            bar.solids.set_rasterized(True)  # one small image instead of 256 vector strips
        return _render(fig, "bias per Philox lane and bit position")


def _lane_extreme(table: dict) -> float:
    """The largest |z| of a lanes table (its grid's or its worst cell's); Undrawable when one is infinite."""
    extreme = 0.0
    grid = table.get("grid")
    if grid is not None:
        if np.isinf(grid).any():
            raise Undrawable(f"the lanes table {label(table.get('title'), 60)!r} holds an infinite z-score")
        if np.isfinite(grid).any():
            extreme = float(np.nanmax(np.abs(grid)))
    worst = table.get("worst")
    if worst:
        z = float(worst[2])
        if math.isinf(z):
            raise Undrawable(f"the lanes table {label(table.get('title'), 60)!r} holds an infinite z-score")
        if z == z:
            extreme = max(extreme, abs(z))
    return extreme


def _lane_panels(tables: list[dict]) -> tuple[list[dict], int]:
    """At most LANE_PANELS tables, the most biased (largest |z|) in their own order, and how many were
    left out. Every value is checked (Undrawable) before anything is drawn."""
    extremes = [_lane_extreme(table) for table in tables]
    if len(tables) <= LANE_PANELS:
        return tables, 0
    keep = sorted(sorted(range(len(tables)), key=lambda i: -extremes[i])[:LANE_PANELS])
    return [tables[i] for i in keep], len(tables) - LANE_PANELS


def _threshold(value: float | None, name: str) -> float | None:
    """A document's threshold as a probability in (0, 1), or Undrawable."""
    if value is not None and not 0.0 < value < 1.0:
        raise Undrawable(f"the document's {name} threshold {value!r} is not a probability in (0, 1)")
    return value


def log10_p_bars(names: list[str], log10_p: list, fail_at: float = 1e-10, suspect_at: float | None = None) -> str:
    """-log10(p) per result, with the FAIL (and SUSPECT) thresholds: failing tests stand out.
    A None (p below every double, or a degenerate statistic) is drawn past the largest bar."""
    import matplotlib

    fail_at = _threshold(fail_at, "failure") or 1e-10
    suspect_at = _threshold(suspect_at, "suspect")
    with matplotlib.rc_context(_rc()):
        finite = [-v for v in log10_p if v is not None and v == v and v > -math.inf]
        beyond = max([400.0] + [2.0 * v for v in finite])  # p underflowed with no log10: drawn past the rest
        values = np.array([max(-v, 0.01) if v is not None and v == v and v > -math.inf else beyond for v in log10_p])
        fig, (ax,) = _figure(7.2, 0.6 + 0.16 * len(names))
        if values.max() > 100 * max(values.min(), 0.01):
            ax.set_xscale("log")
        y = np.arange(len(names))[::-1]
        colours = ["#c62828" if v >= -math.log10(fail_at) else
                   "#ef6c00" if suspect_at and v >= -math.log10(suspect_at) else "#90a4ae" for v in values]
        ax.barh(y, values, color=colours, height=0.7)
        ax.axvline(-math.log10(fail_at), color="#c62828", linestyle="--", linewidth=1)
        if suspect_at:
            ax.axvline(-math.log10(suspect_at), color="#ef6c00", linestyle=":", linewidth=1)
        ax.set_yticks(y, [label(n, 48) for n in names], fontsize=7)
        ax.set_xlabel("-log10 p (dashed: the FAIL level; dotted: the SUSPECT level)")
        return _render(fig, "-log10 p of the failing and suspect results")


def bit_strip(elements: list[int], counts: list[list[int]], results: int, of: int) -> str:
    """Which bits of which elements a failure group got wrong: the elements (x, by index) by bit
    (y, 0 = least significant), a cell marked where expected xor actual has that bit, the darker
    the more of the ``results`` read (of the group's ``of``) have it. ``counts``: per bit, per element."""
    import matplotlib

    grid = np.asarray(counts, dtype=float).reshape(-1, len(elements))
    bits = grid.shape[0]
    with matplotlib.rc_context(_rc()):
        fig, (ax,) = _figure(min(7.2, 2.2 + 0.13 * len(elements)), 1.6 if bits <= 32 else 2.6)
        rgba = np.zeros(grid.shape + (4,))
        rgba[..., :3] = (0.776, 0.157, 0.157)   # #c62828, the page's failure red
        rgba[..., 3] = np.where(grid > 0, 0.35 + 0.65 * grid / max(1, results), 0.0)
        ax.set_facecolor("#f4f6f8")
        ax.imshow(rgba, aspect="auto", interpolation="none", origin="lower",
                  extent=(-0.5, len(elements) - 0.5, -0.5, bits - 0.5))
        _grid_lines(ax, [], np.arange(8, bits, 8) - 0.5, (-0.5, len(elements) - 0.5), (-0.5, bits - 0.5), 0.8)
        step = max(1, math.ceil(len(elements) / 16))
        positions = list(range(0, len(elements), step))
        ax.set_xticks(positions, [str(elements[i]) for i in positions], fontsize=7.5)
        ax.set_yticks(list(range(0, bits, 8)) + [bits - 1])
        ax.tick_params(labelsize=7.5)
        ax.set_xlim(-0.5, len(elements) - 0.5)
        ax.set_ylim(-0.5, bits - 0.5)
        ax.set_xlabel("element", fontsize=8)
        ax.set_ylabel("bit", fontsize=8)
        wrong, columns = int((grid > 0).sum()), int((grid > 0).any(axis=0).sum())
        read = f"{results} of {of} results" if of > results else f"{results} result{'s' if results != 1 else ''}"
        ax.set_title(f"{wrong} wrong bit{'s' if wrong != 1 else ''} in {columns} element"
                     f"{'s' if columns != 1 else ''} ({read})", fontsize=8, loc="left")
        return _render(fig, "wrong bits by element and bit position")


def _bin_range(text: str) -> tuple[float, float]:
    """The distances a ULP histogram bin's label covers ("0", "2-3", ">=65536"); (nan, nan) if unknown."""
    low, _, high = text.removeprefix(">=").partition("-")
    try:
        start = float(low)
        return start, math.inf if text.startswith(">=") else float(high or low)
    except ValueError:
        return math.nan, math.nan


def ulp_histogram(bins: list[tuple[str, int]], bound: float | None) -> str:
    """A numbers result's ULP distances: one bar per bin of its histogram (as the document labels
    them), grey within the bound, red past it, orange for a bin the bound cuts."""
    import matplotlib

    with matplotlib.rc_context(_rc()):
        fig, (ax,) = _figure(3.2, 1.7)
        counts = np.array([max(0, int(count)) for _, count in bins], dtype=float)
        colours = []
        for text, _ in bins:
            start, end = _bin_range(text)
            past = bound is not None and start > bound
            cut = bound is not None and start <= bound < end
            colours.append("#c62828" if past else "#ef6c00" if cut else "#90a4ae")
        x = np.arange(len(bins))
        ax.bar(x, np.maximum(counts, 0.8), color=colours, width=0.7)
        if counts.max(initial=0) > 50 * max(1.0, counts[counts > 0].min(initial=1)):
            ax.set_yscale("log")
        ax.set_xticks(x, [label(text, 12) for text, _ in bins], fontsize=7.5)
        ax.tick_params(labelsize=7.5)
        ax.set_xlabel("distance (ULPs)", fontsize=8)
        ax.set_ylabel("elements", fontsize=8)
        ax.set_title("ULP histogram" + (f"; bound {bound:g} ULP" if bound is not None else ""), fontsize=8, loc="left")
        return _render(fig, "histogram of ULP distances against the bound")
