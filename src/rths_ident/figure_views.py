"""One drawing of each view, for the PNG figures (matplotlib) and the live page alike.

Where two curves nearly coincide — measured under identified, hybrid under reference,
measured under target — the one drawn first would hide under the other. Every figure
draws them the same way, with the styles of :data:`STYLES` (the live page gets the same
table as JSON and draws with it):

* the measured (or hybrid) curve underneath, wide and light; the model (or reference,
  or target) on top, thin and dashed, so both stay visible where they coincide;
* their difference as its own trace, on its own axis (:func:`overlay`), where an error
  of 1 % is as visible as the curves themselves;
* text labels (an index, a note) placed where there is no data (:func:`label_where_no_data`:
  matplotlib's "best" location, which avoids the plotted points).

Colours are hex strings, widths in points (matplotlib) and CSS pixels (the page), dashes
as on–off lengths in the same units (None: solid).
"""

from __future__ import annotations

__all__ = ["STYLES", "line_kwargs", "overlay", "label_where_no_data"]

#: role -> {"color", "width", "dash", "z"}; "z" orders the layers (higher on top)
STYLES: dict[str, dict] = {
    "measured": {"color": "#9e9e9e", "width": 2.4, "dash": None, "z": 1},  # underneath: wide, light
    "hybrid": {"color": "#64b5f6", "width": 2.4, "dash": None, "z": 1},
    "target": {"color": "#1f3b73", "width": 1.0, "dash": None, "z": 3},
    "command": {"color": "#ff7f0e", "width": 0.9, "dash": None, "z": 2},
    "model": {"color": "#0d47a1", "width": 1.0, "dash": [5.0, 3.0], "z": 3},  # on top: thin, dashed
    "reference": {"color": "#000000", "width": 0.9, "dash": [5.0, 3.0], "z": 3},
    "initial": {"color": "#c62828", "width": 0.8, "dash": [1.5, 2.0], "z": 2},
    "error": {"color": "#7b1fa2", "width": 0.8, "dash": None, "z": 2},  # a difference, on its own axis
}


def line_kwargs(role: str, **overrides) -> dict:
    """matplotlib ``plot`` keyword arguments of ``role``'s style."""
    style = STYLES[role]
    kwargs = {"color": style["color"], "lw": style["width"], "zorder": style["z"],
              "ls": "-" if style["dash"] is None else (0, tuple(style["dash"]))}
    kwargs.update(overrides)
    return kwargs


def overlay(ax, ax_difference, x, under, over, *, under_role: str = "measured", over_role: str = "model",
            under_label: str = "", over_label: str = "", difference_label: str = "", difference_role: str = "error"):
    """Draw ``under`` (wide, light) and ``over`` (thin, dashed, on top) against ``x`` on
    ``ax``, and ``under − over`` (measured − model, hybrid − reference) as its own trace
    on ``ax_difference`` (None: no difference axis) with a zero line. Returns the
    difference.""" 
    import numpy as np  # noqa: PLC0415

    ax.plot(x, under, label=under_label or None, **line_kwargs(under_role))
    ax.plot(x, over, label=over_label or None, **line_kwargs(over_role))
    difference = np.asarray(under) - np.asarray(over)
    if ax_difference is not None:
        ax_difference.plot(x, difference, label=difference_label or None, **line_kwargs(difference_role))
        ax_difference.axhline(0.0, color="k", lw=0.5, zorder=0)
    return difference


def label_where_no_data(ax, text: str, fontsize: float = 8.0):
    """``text`` in a box where ``ax`` has no data (matplotlib's "best" legend location,
    which avoids the plotted points: draw the data first). The box is kept when the
    axis gets its own legend afterwards."""
    box = ax.legend(handles=[], title=text, loc="best", fontsize=fontsize, title_fontsize=fontsize,
                    framealpha=0.85, borderpad=0.3)
    box.set_zorder(5)
    ax.add_artist(box)
    ax.legend_ = None  # the axis' own legend, if any, comes on top of this one
    return box
