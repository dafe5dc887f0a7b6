"""Figure conventions shared by the experiments: page width, legible fonts, series
that stay apart in greyscale, one legend below the panels and a caption under it.
"""

from __future__ import annotations

import contextlib
import textwrap
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = [
    "PAGE_WIDTH",
    "bar_style",
    "legend_and_caption",
    "log_ticks",
    "lower_bound_style",
    "page_style",
    "series_style",
]

#: Inches: a full text width, so the saved figure is read at (about) its own size.
PAGE_WIDTH = 7.0

_RC = {
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "lines.linewidth": 1.4,
    "lines.markersize": 4.5,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.grid.which": "both",
}

#: Okabe-Ito colours (colour-blind safe, yellow left out: too pale on white); line style and
#: marker change with the colour, so every series is told apart in greyscale too.
_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#999999", "#332288")
_LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 1)), (0, (8, 2)), (0, (3, 1, 3, 3)))
_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*")
_HATCHES = ("", "//", "..", "xx", "\\\\", "oo", "--", "++")


def series_style(i: int) -> dict[str, Any]:
    """Colour, line style and marker of the i-th series (keyword arguments of ``Axes.plot``)."""
    k = i % len(_COLORS)
    return {"color": _COLORS[k], "linestyle": _LINESTYLES[k], "marker": _MARKERS[k]}


def bar_style(i: int) -> dict[str, Any]:
    """Fill colour and hatch of the i-th bar series (keyword arguments of ``Axes.bar``)."""
    k = i % len(_COLORS)
    return {"color": _COLORS[k], "hatch": _HATCHES[k], "edgecolor": "white", "linewidth": 0.0}


def lower_bound_style() -> dict[str, Any]:
    """A wide light-grey band drawn under the lines: an upper bound lying on it is tight."""
    return {"color": "0.6", "alpha": 0.45, "linewidth": 7.0, "solid_capstyle": "round", "zorder": 1}


def log_ticks(ax: Any, axis: str = "y", *, plain: bool = True) -> None:
    """Log scale with readable labels.  ``plain``: numbers (0.05, 1, 20) at 1, 2 and 5 per decade
    when the view spans at most three decades, else at each decade; otherwise powers of ten
    at each decade.  Call after plotting (the span is read from the view)."""
    from matplotlib.ticker import FuncFormatter, LogFormatterSciNotation, LogLocator, NullFormatter

    target = ax.yaxis if axis == "y" else ax.xaxis
    (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
    low, high = target.get_view_interval()
    subs = (1.0, 2.0, 5.0) if plain and high / low <= 1e3 else (1.0,)
    target.set_major_locator(LogLocator(base=10.0, subs=subs, numticks=30))
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}") if plain else LogFormatterSciNotation())
    target.set_minor_formatter(NullFormatter())


@contextlib.contextmanager
def page_style() -> Iterator[Any]:
    """``matplotlib.pyplot`` (Agg backend) with the page-width font sizes active inside the block."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context(_RC):
        yield plt


def legend_and_caption(
    fig: Any, handles: Sequence[Any], labels: Sequence[str], *, ncol: int, caption: str = ""
) -> None:
    """Lay the panels out, then put one legend centred below all of them and the caption under it.

    Both sit outside the axes (never over data); save with ``bbox_inches="tight"`` to keep them.
    A tuple handle (e.g. a line and a bar of one series) is drawn as its artists side by side.
    """
    from matplotlib.legend_handler import HandlerTuple

    fig.tight_layout()
    renderer = fig.canvas.get_renderer()
    to_fig = fig.transFigure.inverted()
    bottom = min(ax.get_tightbbox(renderer).transformed(to_fig).y0 for ax in fig.axes)
    legend = fig.legend(
        handles,
        labels,
        loc="upper center",
        bbox_to_anchor=(0.5, bottom - 0.005),
        ncol=ncol,
        frameon=False,
        handler_map={tuple: HandlerTuple(ndivide=None, pad=0.6)},
    )
    if caption:
        fig.canvas.draw()
        below = legend.get_window_extent(renderer).transformed(to_fig).y0
        # about 0.5 em per character: wrap the caption to the figure's width
        chars = int(fig.get_figwidth() * 72 / (0.5 * _RC["font.size"]))
        fig.text(0.01, below - 0.01, textwrap.fill(caption, chars), ha="left", va="top", fontsize=_RC["font.size"])
