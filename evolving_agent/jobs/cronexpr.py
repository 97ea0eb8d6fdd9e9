"""Cron expressions as cron means them, for the scheduler, ``schedule show`` and print-cron.

APScheduler 3.x's ``CronTrigger.from_crontab`` numbers the days of the week from
Monday (0 = Monday), refuses 7, and reads ``*/2`` in the day-of-week field on its own
numbering; it also ANDs a restricted day-of-month with a restricted day-of-week.  Cron
(and so ``print-cron``'s crontab lines) counts 0 and 7 as Sunday and fires when
*either* day field matches.  So we parse the five fields ourselves, once, into sets of
values in cron's meaning, and build both the APScheduler trigger and the systemd
``OnCalendar=`` values from those sets: the three can no longer disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import tzinfo
from typing import TYPE_CHECKING

from evolving_agent.records import record

if TYPE_CHECKING:
    # APScheduler (with asyncio and ssl) is imported for a trigger only: parsing,
    # validating and printing a cron line, which every job run does, need none of it.
    from apscheduler.triggers.base import BaseTrigger
    from apscheduler.triggers.cron import CronTrigger

DOW_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_SYSTEMD_DOW = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")

MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}

# (name, lowest, highest, names for values lowest.. ) per field.
_FIELDS: tuple[tuple[str, int, int, tuple[str, ...]], ...] = (
    ("minute", 0, 59, ()),
    ("hour", 0, 23, ()),
    ("day of month", 1, 31, ()),
    ("month", 1, 12, MONTH_NAMES),
    ("day of week", 0, 7, DOW_NAMES + ("sun",)),
)


class CronError(ValueError):
    """A cron expression we cannot read (the message says which field and why)."""


@record(frozen=True)
class CronSpec:
    """The five fields as sorted value tuples; ``None`` means the field was ``*``.

    ``dow`` uses cron's numbering with Sunday = 0 (a 7 is folded into 0).
    """

    expr: str
    minute: tuple[int, ...] | None
    hour: tuple[int, ...] | None
    dom: tuple[int, ...] | None
    month: tuple[int, ...] | None
    dow: tuple[int, ...] | None
    # A day field written from '*' ("*/2"): cron (Vixie, cronie) then ANDs the two
    # day fields instead of ORing them, however the '*' was stepped.
    star_day: bool = False

    @property
    def either_day(self) -> bool:
        """Both day fields restricted (neither from '*'): cron fires when either matches."""
        return self.dom is not None and self.dow is not None and not self.star_day

    # -- APScheduler ------------------------------------------------------------------

    def trigger(self, timezone: tzinfo) -> BaseTrigger:
        """An APScheduler 3.x trigger that fires exactly when cron would."""
        from apscheduler.triggers.combining import OrTrigger

        if self.either_day:
            return OrTrigger(
                [self._cron(timezone, dom=self.dom, dow=None), self._cron(timezone, None, self.dow)]
            )
        return self._cron(timezone, self.dom, self.dow)

    def _cron(
        self, timezone: tzinfo, dom: tuple[int, ...] | None, dow: tuple[int, ...] | None
    ) -> CronTrigger:
        from apscheduler.triggers.cron import CronTrigger

        return CronTrigger(
            minute=_aps(self.minute),
            hour=_aps(self.hour),
            day=_aps(dom),
            month=_aps(self.month),
            # Names, not numbers: APScheduler's numbers start at Monday.
            day_of_week="*" if dow is None else ",".join(DOW_NAMES[d] for d in dow),
            timezone=timezone,
        )

    # -- systemd ----------------------------------------------------------------------

    def on_calendar(self, timezone: str = "local") -> list[str]:
        """``OnCalendar=`` values (several when either day field may match)."""
        if self.either_day:
            specs = [(self.dom, None), (None, self.dow)]
        else:
            specs = [(self.dom, self.dow)]
        out = []
        for dom, dow in specs:
            days = "" if dow is None else _sd(dow, lambda d: _SYSTEMD_DOW[d]) + " "
            text = f"{days}*-{_sd(self.month)}-{_sd(dom)} {_sd(self.hour)}:{_sd(self.minute)}:00"
            out.append(text if timezone == "local" else f"{text} {timezone}")
        return out


def parse_cron(expr: str) -> CronSpec:
    """Parse a 5-field cron line (numbers, names, ranges, lists, steps, ``@daily``…)."""
    text = " ".join(expr.split())
    text = MACROS.get(text.lower(), text)
    fields = text.split(" ")
    if len(fields) != 5:
        raise CronError(f"{expr!r} does not have 5 fields (minute hour day month weekday)")
    values = [_parse_field(f, *spec) for f, spec in zip(fields, _FIELDS, strict=True)]
    dow = values[4]
    if dow is not None:
        dow = tuple(sorted({d % 7 for d in dow}))
        if len(dow) == 7:
            dow = None  # every day of the week is no restriction (cron's own reading of 0-7)
    star_day = fields[2].startswith("*") or fields[4].startswith("*")
    return CronSpec(expr, values[0], values[1], values[2], values[3], dow, star_day)


def _parse_field(
    text: str, name: str, low: int, high: int, names: tuple[str, ...]
) -> tuple[int, ...] | None:
    if text in ("*", "?"):
        return None
    found: set[int] = set()
    for item in text.split(","):
        base, slash, step_text = item.partition("/")
        step = 1
        if slash:
            if not step_text.isdigit() or int(step_text) == 0:
                raise CronError(f"{name}: bad step {step_text!r} in {text!r}")
            step = int(step_text)
        if base == "*":
            lo, hi = low, high if name != "day of week" else 6
        elif "-" in base:
            a, _, b = base.partition("-")
            lo, hi = _value(a, name, low, high, names), _value(b, name, low, high, names)
            if lo > hi:
                raise CronError(f"{name}: range {base!r} runs backwards")
        else:
            lo = _value(base, name, low, high, names)
            hi = high if slash else lo  # "5/15": from 5 to the end, every 15
        found.update(range(lo, hi + 1, step))
    return tuple(sorted(found))


def _value(text: str, name: str, low: int, high: int, names: tuple[str, ...]) -> int:
    t = text.lower()
    if names and t in names:
        return names.index(t) + (low if name == "month" else 0)
    if not t.isdigit():
        raise CronError(f"{name}: {text!r} is not a number" + (" or a name" if names else ""))
    value = int(t)
    if not low <= value <= high:
        raise CronError(f"{name}: {value} is outside {low}-{high}")
    return value


def _aps(values: tuple[int, ...] | None) -> str:
    return "*" if values is None else ",".join(str(v) for v in values)


def _sd(values: tuple[int, ...] | None, show: Callable[[int], str] = "{:02d}".format) -> str:
    """A value set as systemd calendar syntax: runs of 3+ as ``a..b``, the rest listed.

    Explicit values, never ``*/N``: systemd reads ``*/N`` differently per field and
    rejects a day or month of ``00``."""
    if values is None:
        return "*"
    parts: list[str] = []
    run: list[int] = []
    for v in [*values, -2]:
        if run and v == run[-1] + 1:
            run.append(v)
            continue
        if run:
            if len(run) >= 3:
                parts.append(f"{show(run[0])}..{show(run[-1])}")
            else:
                parts.extend(show(x) for x in run)
        run = [v]
    return ",".join(parts)
