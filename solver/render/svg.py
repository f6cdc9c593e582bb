"""Small inline SVG charts for the HTML report (`report_html.py`): a horizontal waterfall, columns (histograms,
quarters), a tornado and a scatter of the time–cost frontier. No plotting dependency and nothing fetched: each
function returns one `<svg>` element as text, styled by the page's CSS classes (so print styles apply), with its
labels escaped and every coordinate written with one decimal (the same inputs give the same bytes).

The caller formats values (with their units) and passes labels; these helpers only place them.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .safe import clean

WIDTH = 720
"""Every chart's viewBox width; it scales to the page's width."""
LABEL_W = 230
"""Room for the row labels of the horizontal charts."""
ROW_H = 24
MAX_COLUMN = 110
"""Widest column of a column chart (a few quarters should not fill the page)."""


def esc(text: object) -> str:
    """User or catalog text made safe for HTML and SVG: control characters shown, markup escaped."""
    return html.escape(clean(str(text)), quote=True)


def _n(x: float) -> str:
    s = f"{x:.1f}"
    return "0.0" if s == "-0.0" else s


def _text(x: float, y: float, s: str, anchor: str = "start", cls: str = "lbl") -> str:
    return f'<text x="{_n(x)}" y="{_n(y)}" text-anchor="{anchor}" class="{cls}">{esc(s)}</text>'


def _rect(x: float, y: float, w: float, h: float, cls: str, tip: str = "") -> str:
    title = f"<title>{esc(tip)}</title>" if tip else ""
    return (f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(max(w, 0.0))}" height="{_n(max(h, 0.0))}" class="{cls}">'
            f"{title}</rect>")


def _line(x1: float, y1: float, x2: float, y2: float, cls: str) -> str:
    return f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}" class="{cls}"/>'


def frame(height: float, title: str, body: Sequence[str]) -> str:
    """One chart: a scalable `<svg>` with an accessible title."""
    return (f'<svg viewBox="0 0 {WIDTH} {_n(height)}" class="chart" role="img" aria-label="{esc(title)}">'
            f"<title>{esc(title)}</title>" + "".join(body) + "</svg>")


@dataclass(frozen=True)
class Scale:
    """A linear map from [lo, hi] to pixels [a, b]."""

    lo: float
    hi: float
    a: float
    b: float

    def __call__(self, v: float) -> float:
        span = self.hi - self.lo
        return self.a + (self.b - self.a) * ((v - self.lo) / span if span else 0.5)


def waterfall(steps: Sequence[tuple[str, float]], total: tuple[str, float], fmt: Callable[[float], str],
              title: str) -> str:
    """A horizontal waterfall: each step a bar from the running total before it to the one after (a negative step
    runs left), then the total from zero."""
    running, spans = 0.0, []
    for label, v in steps:
        spans.append((label, running, running + v, v))
        running += v
    ends = [0.0, total[1]] + [x for _l, a, b, _v in spans for x in (a, b)]
    x = Scale(min(ends), max(ends), LABEL_W, WIDTH - 90)
    rows = len(spans) + 1
    body = [_line(x(0.0), 6, x(0.0), 10 + rows * ROW_H, "axis")]
    for i, (label, a, b, v) in enumerate(spans):
        y = 10 + i * ROW_H
        cls = "bar neg" if v < 0 else "bar"
        body += [_text(LABEL_W - 8, y + 16, label, "end"),
                 _rect(min(x(a), x(b)), y + 3, abs(x(b) - x(a)) or 1.0, ROW_H - 6, cls, f"{label}: {fmt(v)}"),
                 _text(max(x(a), x(b)) + 5, y + 16, ("+" if v >= 0 else "") + fmt(v), cls="val")]
        if i + 1 < len(spans):
            body.append(_line(x(b), y + ROW_H - 3, x(b), y + ROW_H + 3, "link"))
    y = 10 + len(spans) * ROW_H
    body += [_text(LABEL_W - 8, y + 16, total[0], "end", "lbl strong"),
             _rect(min(x(0.0), x(total[1])), y + 3, abs(x(total[1]) - x(0.0)) or 1.0, ROW_H - 6, "bar total",
                   f"{total[0]}: {fmt(total[1])}"),
             _text(max(x(0.0), x(total[1])) + 5, y + 16, fmt(total[1]), cls="val strong")]
    return frame(20 + rows * ROW_H, title, body)


def columns(bars: Sequence[tuple[str, float, str]], fmt: Callable[[float], str], title: str,
            marker: tuple[float, str] | None = None, axis_label: str = "") -> str:
    """Vertical bars: (label under the bar, value, CSS class); `marker` a dashed vertical line at a fractional bar
    position (0 = the left edge of the first bar, len(bars) = the right edge of the last) with its label."""
    height, top, bottom = 250, 30, 200
    n = max(1, len(bars))
    step = min(MAX_COLUMN, (WIDTH - 80) / n)
    left = 60 + ((WIDTH - 80) - step * n) / 2
    right = left + step * n
    peak = max([v for _l, v, _c in bars] + [0.0]) or 1.0
    y = Scale(0.0, peak, bottom, top)
    body = [_line(left, bottom, right, bottom, "axis")]
    every = max(1, -(-n // 7))
    for i, (label, v, cls) in enumerate(bars):
        x0 = left + i * step
        body.append(_rect(x0 + 2, y(v), step - 4, bottom - y(v), f"bar {cls}".strip(), f"{label}: {fmt(v)}"))
        if n <= 16:
            body.append(_text(x0 + step / 2, y(v) - 4, fmt(v), "middle", "val small"))
        if i % every == 0:
            body.append(_line(x0 + 1, bottom, x0 + 1, bottom + 4, "axis"))
        if i % every == 0:
            body.append(_text(x0 + (1 if every > 1 else step / 2), bottom + 16, label,
                              "start" if every > 1 else "middle", "lbl small"))
    if marker is not None:
        mx = left + marker[0] * step
        body += [_line(mx, top - 10, mx, bottom, "marker"), _text(mx + 4, top - 12, marker[1], cls="lbl mark")]
    if axis_label:
        body.append(_text(left, height - 12, axis_label, cls="lbl small"))
    return frame(height, title, body)


def tornado(rows: Sequence[tuple[str, float, float]], base: float, fmt: Callable[[float], str], title: str,
            base_label: str) -> str:
    """One row per uncertainty: a bar from `base` to its favourable value and one to its unfavourable value
    (`rows`: label, favourable, unfavourable), largest swing first as given."""
    ends = [base] + [v for _l, a, b in rows for v in (a, b)]
    x = Scale(min(ends), max(ends), LABEL_W + 80, WIDTH - 80)
    height = 40 + len(rows) * ROW_H
    body = [_line(x(base), 16, x(base), 24 + len(rows) * ROW_H, "axis"),
            _text(x(base), 12, f"{base_label} {fmt(base)}", "middle", "lbl small")]
    for i, (label, good, bad) in enumerate(rows):
        y = 22 + i * ROW_H
        body.append(_text(LABEL_W, y + 16, label, "end"))
        for v, cls in sorted(((good, "good"), (bad, "bad")), key=lambda vc: -abs(x(vc[0]) - x(base))):
            a, b = sorted((x(base), x(v)))
            body.append(_rect(a, y + 4, b - a, ROW_H - 8, f"bar {cls}", f"{label}: {fmt(v)}"))
        lo, hi = (good, bad) if x(good) <= x(bad) else (bad, good)
        body += [_text(min(x(lo), x(base)) - 4, y + 16, fmt(lo), "end", "val small"),
                 _text(max(x(hi), x(base)) + 4, y + 16, fmt(hi), cls="val small")]
    return frame(height, title, body)


@dataclass(frozen=True)
class Dot:
    """A point of a scatter: its coordinates, the label beside it and whether it is highlighted."""

    x: float
    y: float
    label: str
    chosen: bool = False
    muted: bool = False


def scatter(dots: Sequence[Dot], x_fmt: Callable[[float], str], y_fmt: Callable[[float], str], title: str,
            marker: tuple[float, str] | None = None) -> str:
    """Dots joined by a step line (a frontier), each labelled; the chosen dot ringed; `marker` a dashed vertical
    line (a deadline) at an x value with its label."""
    height, top, bottom, left, right = 330, 36, 280, 80, WIDTH - 150
    xs = [d.x for d in dots] + ([marker[0]] if marker else [])
    ys = [d.y for d in dots]
    pad_x = (max(xs) - min(xs)) * 0.05 or 1.0
    pad_y = (max(ys) - min(ys)) * 0.1 or max(abs(ys[0]) * 0.1, 1.0)
    x = Scale(min(xs) - pad_x, max(xs) + pad_x, left, right)
    y = Scale(min(ys) - pad_y, max(ys) + pad_y, bottom, top)
    body = [_line(left, bottom, right, bottom, "axis"), _line(left, top, left, bottom, "axis")]
    for v in (min(ys), max(ys)):
        body += [_line(left - 4, y(v), left, y(v), "axis"), _text(left - 6, y(v) + 4, y_fmt(v), "end", "lbl small")]
    for v in sorted({min(d.x for d in dots), max(d.x for d in dots)}):
        body.append(_text(x(v), bottom + 16, x_fmt(v), "middle", "lbl small"))
    ordered = sorted(dots, key=lambda d: d.x)
    path = [f"M{_n(x(ordered[0].x))} {_n(y(ordered[0].y))}"] + [f"H{_n(x(d.x))} V{_n(y(d.y))}" for d in ordered[1:]]
    body.append(f'<path d="{" ".join(path)}" class="step"/>')
    if marker is not None:
        body += [_line(x(marker[0]), top - 14, x(marker[0]), bottom, "marker"),
                 _text(x(marker[0]) + 4, top - 18, marker[1], cls="lbl mark")]
    for d in ordered:
        cls = "dot chosen" if d.chosen else ("dot muted" if d.muted else "dot")
        body.append(f'<circle cx="{_n(x(d.x))}" cy="{_n(y(d.y))}" r="{6 if d.chosen else 4}" class="{cls}">'
                    f"<title>{esc(d.label)}</title></circle>")
        dx, dy = (12, 4) if d.chosen else (6, -9)
        body.append(_text(x(d.x) + dx, y(d.y) + dy, d.label, cls="val small" + (" strong" if d.chosen else "")))
    return frame(height, title, body)


__all__ = ["esc", "frame", "waterfall", "columns", "tornado", "scatter", "Dot", "Scale"]
