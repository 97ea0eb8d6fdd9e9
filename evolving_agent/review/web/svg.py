"""Server-rendered SVG pictures of the month: no script, no CDN, readable as they come.

Each picture is a ``Markup`` string built here with every piece of root text escaped and
neutralised (:func:`~evolving_agent.review.web.text.visible`); ``<title>`` elements give
each mark a tooltip a browser shows without JavaScript.
"""

from __future__ import annotations

from markupsafe import Markup, escape

from evolving_agent.review.glance import MonthGlance
from evolving_agent.review.web.text import visible

STATE_COLOURS = {
    "emerging": "#c9d6e8",
    "live": "#2f7d4f",
    "weakening": "#e0a030",
    "split": "#8a5fbf",
    "retired": "#9a9a9a",
}
TAGGED, UNTAGGED, STALE, FALLBACK = "#35608f", "#a9c1dc", "#c0392b", "#c0392b"

DAY_W = 24
LEFT = 8
LANE_LABEL = 240


def _t(text: object) -> str:
    return str(escape(visible(str(text), multiline=False)))


def friction_chart(g: MonthGlance) -> Markup:
    """Bars of friction per day (tagged dark, untagged light), with the night's carry
    type under each day, stale mornings and fallbacks in red, job runs marked."""
    top = max([d.friction for d in g.days] + [4])
    bar_h = 110
    unit = bar_h / top
    axis = 22  # the count scale sits left of the bars, clear of them
    width = axis + LEFT + DAY_W * len(g.days)
    base = 20 + bar_h
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'viewBox="0 0 {width} {base + 64}" width="{width}" height="{base + 64}" '
        f'aria-label="friction per day in {_t(g.month)}">'
    ]
    for n in range(0, top + 1, max(1, top // 4)):
        y = base - n * unit
        parts.append(
            f'<line x1="{axis}" x2="{width - LEFT}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
            f'<text x="{axis - 4}" y="{y + 3:.1f}" class="axis" text-anchor="end">{n}</text>'
        )
    for i, d in enumerate(g.days):
        x = axis + i * DAY_W
        tip = (
            f"{d.day}: {len(d.tagged)} tagged, {len(d.untagged)} untagged friction"
            + (f"; carry {d.carry_type} on {d.carry_hypothesis}" if d.carry_type else "")
            + ("; stale bias this morning" if d.stale else "")
            + (f"; jobs: {', '.join(d.jobs)}" if d.jobs else "")
            + (f"; {len(d.fallbacks)} fallback(s)" if d.fallbacks else "")
        )
        parts.append(f"<g><title>{_t(tip)}</title>")
        h_tag, h_un = len(d.tagged) * unit, len(d.untagged) * unit
        parts.append(
            f'<rect x="{x + 3}" y="{base - h_tag:.1f}" width="{DAY_W - 6}" '
            f'height="{h_tag:.1f}" fill="{TAGGED}"/>'
            f'<rect x="{x + 3}" y="{base - h_tag - h_un:.1f}" width="{DAY_W - 6}" '
            f'height="{h_un:.1f}" fill="{UNTAGGED}"/>'
        )
        if d.friction:
            parts.append(
                f'<text x="{x + DAY_W / 2}" y="{base - h_tag - h_un - 3:.1f}" class="count" '
                f'text-anchor="middle">{d.friction}</text>'
            )
        weekend = d.day.weekday() >= 5
        parts.append(
            f'<text x="{x + DAY_W / 2}" y="{base + 13}" text-anchor="middle" '
            f'class="day{" weekend" if weekend else ""}">{d.day.day}</text>'
        )
        if d.carry_type:
            parts.append(
                f'<text x="{x + DAY_W / 2}" y="{base + 27}" text-anchor="middle" '
                f'class="carry">{_t(d.carry_type[:3])}</text>'
            )
        if d.stale:
            parts.append(
                f'<rect x="{x + 2}" y="{base + 33}" width="{DAY_W - 4}" height="6" fill="{STALE}"/>'
            )
        for k, job in enumerate(d.jobs):
            parts.append(
                f'<text x="{x + DAY_W / 2}" y="{base + 52 + 10 * k}" text-anchor="middle" '
                f'class="job">{_t(job[0].upper())}</text>'
            )
        if d.fallbacks:
            parts.append(
                f'<text x="{x + DAY_W / 2}" y="14" text-anchor="middle" class="fallback" '
                f'fill="{FALLBACK}">!</text>'
            )
        parts.append("</g>")
    parts.append("</svg>")
    return Markup("".join(parts))


def state_lanes(g: MonthGlance) -> Markup:
    """One row per hypothesis: its state on each day, coloured, changes marked."""
    row = 22
    width = LANE_LABEL + DAY_W * len(g.days) + LEFT
    height = 18 + row * max(1, len(g.lanes))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'aria-label="hypothesis states over {_t(g.month)}">'
    ]
    for i, d in enumerate(g.days):
        if d.day.day in (1, 8, 15, 22, 29):
            parts.append(
                f'<text x="{LANE_LABEL + i * DAY_W + 2}" y="11" class="axis">{d.day.day}</text>'
            )
    for r, lane in enumerate(g.lanes):
        y = 16 + r * row
        h = lane.hypothesis
        label = h.id + " " + h.text
        short = label if len(label) <= 38 else label[:37] + "…"
        parts.append(
            f'<g><title>{_t(label)}</title><text x="0" y="{y + 14}" class="lane">'
            f"{_t(short)}</text></g>"
        )
        for i, state in enumerate(lane.states):
            if state is None:
                continue
            day = g.days[i].day
            parts.append(
                f"<g><title>{_t(f'{h.id} on {day}: {state}')}</title>"
                f'<rect x="{LANE_LABEL + i * DAY_W}" y="{y + 2}" width="{DAY_W - 1}" '
                f'height="{row - 6}" fill="{STATE_COLOURS.get(state, "#ccc")}"/></g>'
            )
        for day, state, _ev in lane.changes:
            i = (day - g.days[0].day).days
            parts.append(
                f'<text x="{LANE_LABEL + i * DAY_W + DAY_W / 2}" y="{y + 15}" '
                f'text-anchor="middle" class="change">{_t(state[0].upper())}</text>'
            )
    parts.append("</svg>")
    return Markup("".join(parts))


def carry_key(g: MonthGlance) -> list[tuple[str, int]]:
    """The carry types used this month (for the key under the chart), most used first."""
    counts: dict[str, int] = {}
    for d in g.days:
        if d.carry_type:
            counts[d.carry_type] = counts.get(d.carry_type, 0) + 1
    return sorted(counts.items(), key=lambda kv: -kv[1])


def state_legend() -> Markup:
    items = "".join(
        f'<svg class="swatch" width="12" height="12"><rect width="12" height="12" '
        f'fill="{colour}"/></svg> {name} '
        for name, colour in STATE_COLOURS.items()
    )
    return Markup(items)
