"""Deciding on the page: reject, a card that went stale while shown, the monthly limit.

A short life queues three reviews (tests/helpers/life.py); one server and one browser
for the module; the tests run in file order on that root.  The CLI acts on the same root
in between, as a second terminal would.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import git
import pytest

from evolving_agent.memory.authority import Writer
from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.ops.hypotheses import add_hypothesis
from evolving_agent.paths import MemoryRoot
from evolving_agent.review.store import list_reviews, load_review
from tests.helpers import run_proc
from tests.helpers.fixtures import isolated_env
from tests.helpers.life import live_three_reviews
from tests.helpers.roots import fresh_root
from tests.helpers.web import Server, browser, owner_page, serve

pytestmark = pytest.mark.slow

# $EA_SCREENSHOT_DIR keeps the page's screenshots for a person to look at.
SHOTS = Path(os.environ["EA_SCREENSHOT_DIR"]) if os.environ.get("EA_SCREENSHOT_DIR") else None


def _at(day: date, hour: int) -> datetime:
    return datetime.combine(day, time(hour)).astimezone()


@dataclass(frozen=True)
class Site:
    root: MemoryRoot
    server: Server
    browser: Any
    env: dict[str, str]
    ids: list[str]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    tmp = tmp_path_factory.mktemp("web-decisions")
    env = isolated_env(tmp)
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        root = fresh_root(tmp / "memory")
        live_three_reviews(root)
        ids = [r.id for r in list_reviews(root)]
    assert len(ids) == 3
    with serve(root.path, env) as server, browser() as b:
        yield Site(root, server, b, env, ids)


def _page(site: Site) -> Any:
    return owner_page(site.browser, site.server, viewport={"width": 1200, "height": 900})


def _state(root: MemoryRoot) -> tuple[str, list[str], int]:
    head = str(git.Repo(root.path).head.commit.hexsha)
    files = sorted(str(p.relative_to(root.reviews)) for p in root.reviews.rglob("*") if p.is_file())
    return head, files, sum(1 for _ in EvidenceLog(root).iter_all())


def test_text_from_the_root_cannot_script_or_reorder_the_page(site: Site) -> None:
    # Guards the page against a session that plants markup or a bidi override in a
    # hypothesis (anything the assistant can write reaches the owner's page).
    hostile = "<script>document.title='owned'</script> \u202eevil\u200b <b>bold</b>"
    # Dated after the lived month's last nightly (11 October): an earlier day is refused.
    add_hypothesis(site.root, hostile, actor="session", ts=_at(date(2026, 10, 12), 9))
    page = _page(site)
    assert page.locator("script").count() == 0 and page.title() != "owned"
    html = page.content()
    assert "\u202e" not in html and "\u200b" not in html
    lanes = page.locator("#month svg.chart").nth(1).text_content() or ""
    assert "⟨U+202E⟩" in lanes or "⟨U+202E⟩" in html
    assert "&lt;script&gt;" in html and "<b>bold</b>" not in html


def test_a_card_the_drift_watch_holds_says_so_and_waits_for_a_look(site: Site) -> None:
    rid = site.ids[2]
    hid = load_review(site.root, rid).pending.hypothesis
    stale = _page(site)  # shown before the drift
    # Two weeks of the essay's pendulum, tagged to this review's hypothesis.
    session = Writer(site.root, "session")
    swings = [
        session.append(
            "friction",
            "The answer was too long." if i % 2 == 0 else "Not enough information this time.",
            supports=hid,
            ts=_at(date(2026, 10, 12) + timedelta(days=i), 14),
        ).id
        for i in range(14)
    ]
    before = _state(site.root)
    stale.locator(f"#card-{rid} form.approve button").click()
    assert "held by the drift watch" in stale.locator("#error").inner_text()
    assert _state(site.root) == before
    page = _page(site)
    card = page.locator(f"#card-{rid}")
    hold = card.locator(".hold").text_content() or ""
    assert "Held by the drift watch" in hold and "pendulum" in hold
    assert card.locator("form.approve").count() == 0
    flag = page.locator("#drift li.kind-pendulum").text_content() or ""
    assert all(i in flag for i in swings)
    if SHOTS:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "held-card.png"), full_page=True)
    card.locator(".hold button").click()
    assert "Looked at the drift flag" in page.locator("#done h1").inner_text()
    ack = [r for r in EvidenceLog(site.root).iter_all() if r.kind == "review"][-1]
    assert ack.actor == "human" and ack.data["action"] == "drift-ack"
    assert ack.data["hypothesis"] == hid and set(swings) <= set(ack.data["evidence_ids"])
    released = _page(site).locator(f"#card-{rid}")
    assert released.locator(".hold").count() == 0
    assert released.locator("form.approve").count() == 1


def test_reject_on_the_page_records_the_reason(site: Site) -> None:
    rid = site.ids[0]
    page = _page(site)
    card = page.locator(f"#card-{rid}")
    # A rejection without a reason is refused by the core, as on the command line.
    before = _state(site.root)
    csrf = card.locator("form.reject input[name=csrf]").get_attribute("value")
    s = site.server
    status, body = s.request(
        "POST",
        f"/review/{rid}/reject",
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Origin": s.origin,
            "Cookie": s.cookie,
        },
        body=f"csrf={csrf}&reason=+++",
    )
    assert status == 409 and "needs a reason" in body
    assert _state(site.root) == before
    card.locator("input[name=reason]").fill("one good week is not a habit yet")
    card.locator("form.reject button").click()
    assert page.locator("#done h1").inner_text() == f"Rejected {rid}"
    review = load_review(site.root, rid)
    assert review.status == "rejected" and review.decision is not None
    assert review.decision.reason == "one good week is not a habit yet"
    assert review.decision.approver == "owner"
    last = [r for r in EvidenceLog(site.root).iter_all() if r.kind == "review"][-1]
    assert last.data["action"] == "reject" and last.data["review_id"] == rid


def _set_limit(site: Site, limit: int) -> None:
    path = site.root.canon / "policy.yaml"
    text = path.read_text(encoding="utf-8")
    old = next(line for line in text.splitlines() if "monthly_limit:" in line)
    Writer(site.root, "human").write(
        "canon",
        "policy.yaml",
        text.replace(old, f"  monthly_limit: {limit}"),
        message=f"review: at most {limit} a month",
    )


def test_the_page_keeps_the_same_monthly_limit(site: Site) -> None:
    by_cli, on_page = site.ids[1], site.ids[2]
    stale = _page(site)  # shown while the limit still had room
    _set_limit(site, 1)
    proc = run_proc(
        "--root",
        str(site.root.path),
        "review",
        "approve",
        by_cli,
        "--yes",
        "--approver",
        "terminal",
        env=site.env,
    )
    assert proc.returncode == 0, proc.stderr  # 1 of 1 used, from a terminal
    before = _state(site.root)
    stale.locator(f"#card-{on_page} form.approve button").click()
    assert "monthly limit is reached" in stale.locator("#error").inner_text()
    assert _state(site.root) == before
    # Shown now, the card says why instead of offering the button.
    card = _page(site).locator(f"#card-{on_page}")
    assert card.locator("form.approve").count() == 0
    assert "monthly limit is reached" in card.locator(".problem").inner_text()
    _set_limit(site, 3)


def test_a_card_shown_before_canon_changed_is_not_applied(site: Site) -> None:
    rid = site.ids[2]
    stale = _page(site)  # the owner looks ...
    # ... while the human edits Canon in a terminal.
    identity = site.root.canon / "identity.yaml"
    text = identity.read_text(encoding="utf-8")
    Writer(site.root, "human").write(
        "canon",
        "identity.yaml",
        text.replace("values:\n", "values:\n  - Be candid about uncertainty.\n"),
        message="values: candour",
    )
    before = _state(site.root)
    stale.locator(f"#card-{rid} form.approve button").click()
    assert "changed since the page was shown" in stale.locator("#error").inner_text()
    assert _state(site.root) == before
    # Shown again, the card is re-validated against Canon as it is now and goes through.
    page = _page(site)
    shown = page.locator(f"#card-{rid} pre.diff").inner_text()
    assert load_review(site.root, site.ids[1]).diff.text in shown  # today's Canon as context
    page.locator(f"#card-{rid} form.approve button").click()
    commit = page.locator("#commit").inner_text()
    head = git.Repo(site.root.path).head.commit
    assert head.hexsha == commit
    assert gitrepo.parse_trailers(str(head.message))["Review-Id"] == rid
    assert "2 of 3 approvals used" in page.locator("#done").inner_text()
    after = identity.read_text(encoding="utf-8")
    assert "Be candid about uncertainty." in after  # the human's edit is kept
    for done in site.ids[1:]:
        assert load_review(site.root, done).diff.text in after
    proc = run_proc("--root", str(site.root.path), "verify", env=site.env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
