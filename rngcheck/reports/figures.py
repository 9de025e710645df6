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

import numpy as np

LANES, BITS = 4, 32
STATUS_COLOURS = {"passed": "#2e7d32", "failed": "#c62828", "error": "#6a1b9a", "info": "#1565c0",
                  "skipped": "#9e9e9e"}
_counter = itertools.count(1)


def _pyplot():
    import matplotlib

    matplotlib.use("svg", force=False) if matplotlib.get_backend().lower() not in ("svg", "agg") else None
    import matplotlib.pyplot as plt

    return plt


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


_ID = re.compile(r'\bid="([^"]+)"')


def _inline(svg: str, prefix: str) -> str:
    """Strip the prolog, prefix every id (and its references), let the figure scale."""
    start = svg.find("<svg")
    svg = svg[start:]
    ids = set(_ID.findall(svg))
    if ids:
        def rename(match):
            return f'{match.group(1)}{prefix}-{match.group(2)}{match.group(3)}'
        pattern = re.compile(r'(\bid="|url\(#|href="#)(' + "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True))
                             + r')(["\)])')
        svg = pattern.sub(rename, svg)
    # responsive: keep the viewBox, let CSS size it
    svg = re.sub(r'^<svg([^>]*?)\swidth="[^"]*"\sheight="[^"]*"', r'<svg\1', svg, count=1)
    svg = svg.replace("<svg ", f'<svg class="figure" role="img" data-figure="{prefix}" ', 1)
    return svg.strip()


def _render(fig, plt) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return _inline(buffer.getvalue(), f"fig{next(_counter)}")


def status_bars(columns: list[str], counts: list[dict]) -> str:
    """Horizontal stacked bars: one per backend column, the share of each status."""
    import matplotlib

    plt = _pyplot()
    with matplotlib.rc_context(_rc()):
        height = 0.55 + 0.32 * len(columns)
        fig, ax = plt.subplots(figsize=(7.2, height))
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
        ax.legend(ncol=5, fontsize=8, frameon=False, loc="lower center", bbox_to_anchor=(0.5, 1.0))
        ax.set_xlim(0, max(1.0, float(left.max())))
        return _render(fig, plt)


def pvalue_histogram(series: dict[str, list[float]], bins: int = 20) -> str:
    """Histogram of p-values on [0, 1] (stacked by series) against the uniform expectation."""
    import matplotlib

    plt = _pyplot()
    edges = np.linspace(0.0, 1.0, bins + 1)
    with matplotlib.rc_context(_rc()):
        fig, ax = plt.subplots(figsize=(7.2, 2.6))
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
        ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        return _render(fig, plt)


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
    from matplotlib.colors import TwoSlopeNorm

    plt = _pyplot()
    with matplotlib.rc_context(_rc()):
        fig, axes = plt.subplots(len(tables), 1, figsize=(7.2, 0.5 + 1.15 * len(tables)), squeeze=False)
        limit = 4.0
        for table in tables:
            if table.get("grid") is not None:
                limit = max(limit, float(np.nanmax(np.abs(table["grid"]))))
            if table.get("worst"):
                limit = max(limit, abs(float(table["worst"][2])))
        norm = TwoSlopeNorm(vmin=-limit, vcenter=0.0, vmax=limit)
        image = None
        for ax, table in zip(axes[:, 0], tables):
            grid = table.get("grid")
            worst = table.get("worst")
            if grid is None:
                grid = np.zeros((LANES, BITS))
                image = ax.imshow(grid, cmap="RdBu_r", norm=norm, aspect="auto", alpha=0.25)
            else:
                image = ax.imshow(grid, cmap="RdBu_r", norm=norm, aspect="auto")
            if worst:
                lane, bit, z = int(worst[0]), int(worst[1]), float(worst[2])
                colour = plt.get_cmap("RdBu_r")(norm(z))
                ax.add_patch(matplotlib.patches.Rectangle((bit - 0.5, lane - 0.5), 1, 1, facecolor=colour,
                                                          edgecolor="black", linewidth=1.2))
                ax.annotate(f"z = {z:+.2f}", (bit, lane), xytext=(bit + (1.2 if bit < 24 else -1.2), lane),
                            ha="left" if bit < 24 else "right", va="center", fontsize=8)
            ax.set_title(label(table["title"], 80), fontsize=9, loc="left")
            ax.set_yticks(range(LANES), [f"lane {i}" for i in range(LANES)])
            ax.set_xticks(range(0, BITS, 4))
            ax.set_xlim(-0.5, BITS - 0.5)
            ax.set_ylim(LANES - 0.5, -0.5)
            ax.tick_params(labelsize=8)
        axes[-1, 0].set_xlabel("bit position (0 = least significant)")
        if image is not None:
            fig.colorbar(image, ax=axes[:, 0].tolist(), fraction=0.03, pad=0.01, label="z")
        return _render(fig, plt)


def log10_p_bars(names: list[str], log10_p: list[float], fail_at: float = 1e-10, suspect_at: float | None = None) -> str:
    """-log10(p) per result, with the FAIL (and SUSPECT) thresholds: failing tests stand out."""
    import matplotlib

    plt = _pyplot()
    with matplotlib.rc_context(_rc()):
        values = np.array([min(-v, 320.0) if v == v and v is not None else 0.0 for v in log10_p])
        fig, ax = plt.subplots(figsize=(7.2, 0.6 + 0.16 * len(names)))
        y = np.arange(len(names))[::-1]
        colours = ["#c62828" if v >= -math.log10(fail_at) else
                   "#ef6c00" if suspect_at and v >= -math.log10(suspect_at) else "#90a4ae" for v in values]
        ax.barh(y, values, color=colours, height=0.7)
        ax.axvline(-math.log10(fail_at), color="#c62828", linestyle="--", linewidth=1)
        if suspect_at:
            ax.axvline(-math.log10(suspect_at), color="#ef6c00", linestyle=":", linewidth=1)
        ax.set_yticks(y, [label(n, 48) for n in names], fontsize=7)
        ax.set_xlabel("-log10 p")
        return _render(fig, plt)
