"""The review page on the demo's lived month, served for real and driven by Chromium.

One server (``evolving-agent review serve``) and one browser for the module; the tests
run in file order on one copy of the kept demo, with two probe cards queued on top: look,
try the doors, edit, approve, reject.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import git
import pytest

from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.ops.hypotheses import fold_root
from evolving_agent.paths import MemoryRoot
from evolving_agent.probes import resolve_answerer
from evolving_agent.probes.diff import diff_probes
from evolving_agent.probes.run import run_probes
from evolving_agent.review.drift import watch
from evolving_agent.review.glance import month_bounds, month_glance
from evolving_agent.review.store import list_reviews, load_review
from tests.helpers import run_proc
from tests.helpers.fixtures import KeptDemo, copy_tree, isolated_env
from tests.helpers.probe_fakes import ANSWERS, fake
from tests.helpers.web import Server, browser, owner_page, serve

pytestmark = pytest.mark.slow


def _shots(tmp_path: Path) -> Path:
    """Where screenshots go: $EA_SCREENSHOT_DIR to keep them for a person, else tmp."""
    out = Path(os.environ.get("EA_SCREENSHOT_DIR") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    return out


@dataclass(frozen=True)
class Site:
    root: MemoryRoot
    server: Server
    browser: Any
    env: dict[str, str]
    review_id: str
    probe_id: str  # a card ``probe diff`` queued
    other_probe: str  # the other one, rejected on the page


@pytest.fixture(scope="module")
def site(kept_demo: KeptDemo, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    tmp = tmp_path_factory.mktemp("web-demo")
    root = MemoryRoot.resolve(copy_tree(kept_demo.directory, tmp / "demo") / "memory")
    env = isolated_env(tmp)
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        rid = next(r.id for r in list_reviews(root) if r.status == "pending")
        # A model upgrade on top of the lived month: its probe card waits beside the rest.
        for model, mode in (("honest-1", "honest"), ("drift-2", "drifting")):
            run_probes(root, model=model, backend=resolve_answerer(root, None, fake(mode)))
        # Two entry cards, then the card holding the upgrade (both entries fell).
        probe_id, other_probe, _hold = diff_probes(root).queued
    with serve(root.path, env) as server, browser() as b:
        yield Site(root, server, b, env, rid, probe_id, other_probe)


def _page(site: Site, **context: Any) -> Any:
    return owner_page(site.browser, site.server, viewport={"width": 1200, "height": 900},
                      **context)  # fmt: skip


def _state(root: MemoryRoot) -> tuple[str, list[str], int]:
    """What a decision would change: Canon's HEAD, the review files, the Evidence count."""
    head = str(git.Repo(root.path).head.commit.hexsha)
    files = sorted(str(p.relative_to(root.reviews)) for p in root.reviews.rglob("*") if p.is_file())
    return head, files, sum(1 for _ in EvidenceLog(root).iter_all())


def test_the_page_shows_the_lived_month(site: Site, tmp_path: Path) -> None:
    page = _page(site)
    assert "token=" not in page.url  # moved into a cookie, out of the address bar
    review = load_review(site.root, site.review_id)
    card = page.locator(f"#card-{site.review_id}")
    assert card.locator("h2").inner_text().startswith(site.review_id)
    assert review.diff.text in card.locator("pre.diff .add").inner_text()
    shown = set(card.locator("code.evid").all_text_contents())
    assert set(review.pending.evidence_ids) <= shown  # every cited id, on the card
    assert "What would reverse it" in card.inner_text()
    # One bar group per day of the month, and a lane per hypothesis.
    first, last = month_bounds(review.pending.month)
    chart = page.locator("#month svg.chart").first
    assert chart.locator("g").count() == (last - first).days + 1
    # The drift panel shows what 'drift' finds over the same days.
    report = watch(site.root, start=first - timedelta(days=14), end=last)
    titles = page.locator("#drift li.flag").all_text_contents()  # folded ids count
    assert len(titles) == len(report.flags)
    for flag, text in zip(report.flags, titles, strict=True):
        assert flag.title in text and all(i in text for i in flag.evidence_ids)
    # The page's figures are the Evidence's, counted here from the log and the register
    # fold (the stale mornings are counted independently in tests/review/test_glance.py).
    log = list(EvidenceLog(site.root).iter_all())
    friction = [r for r in log if r.kind == "friction" and first <= r.day() <= last]
    supported = {i for h in fold_root(site.root).values() for i in h.supports}
    supported |= {r.id for r in friction if r.supports}
    nights = {r.data.get("date") for r in log if r.kind == "job" and r.data.get("job") == "nightly"}
    in_month = [d for d in nights if isinstance(d, str) and str(first) <= d <= str(last)]
    summary = page.locator("#month p.summary").inner_text()
    assert summary.startswith(f"{len(friction)} friction events"), summary
    assert f"{len(in_month)} nightly runs" in summary, summary
    glance = month_glance(site.root, review.pending.month)
    assert f"{glance.stale_days} stale morning(s)" in summary, summary
    share = sum(1 for r in friction if r.id in supported)
    assert f"{share} of {len(friction)} (" in page.locator("body").inner_text()
    shot = page.screenshot(path=str(_shots(tmp_path) / "demo-month.png"), full_page=True)
    assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 20_000

    # Readable without JavaScript: the page has none, and says the same with it off.
    plain = _page(site, java_script_enabled=False)
    assert (
        plain.locator(f"#card-{site.review_id} pre.diff").inner_text()
        == card.locator("pre.diff").inner_text()
    )
    assert plain.locator("#month svg.chart").count() == 2


def test_a_probe_card_shows_what_was_asked_both_answers_and_its_runs(site: Site) -> None:
    review = load_review(site.root, site.probe_id)
    assert review.pending.probe is not None
    (pair,) = review.pending.probe.pairs
    card = _page(site).locator(f"#probe-{site.probe_id}")
    probes = (site.root.canon / "probes.yaml").read_text(encoding="utf-8")
    asked = card.locator("blockquote.prompt").inner_text()
    assert asked and asked in probes  # the probe's own question
    before = card.locator(".answer.before")
    after = card.locator(".answer.after")
    assert "honest-1" in before.locator("h4").inner_text()
    assert "drift-2" in after.locator("h4").inner_text()
    assert after.locator(".verdict").text_content() == pair.verdict
    said = {before.locator("pre").inner_text(), after.locator("pre").inner_text()}
    assert said <= set(ANSWERS["honest"].values()) | set(ANSWERS["drifting"].values())
    assert before.locator("code.evid").inner_text() == pair.before
    assert after.locator("code.evid").inner_text() == pair.after
    assert f"What changed: {pair.why}" in after.inner_text()
    # Provenance: the probe diff's record and both probe runs behind the answers.
    runs = {
        r.data["run"]
        for r in EvidenceLog(site.root).iter_kind("probe")
        if r.id in (pair.before, pair.after)
    }
    provenance = card.locator(".provenance").inner_text()
    assert len(runs) == 2 and all(run in provenance for run in runs)
    (queued,) = [
        r
        for r in EvidenceLog(site.root).iter_kind("review-queued")
        if r.data["review_id"] == site.probe_id
    ]
    assert queued.data["by"] == "probe" and queued.data["run"] in provenance


def test_requests_without_the_token_from_elsewhere_or_as_get_change_nothing(site: Site) -> None:
    s = site.server
    before = _state(site.root)
    rid = site.review_id
    page = _page(site)
    approve_csrf = page.locator(f"#card-{rid} form.approve input[name=csrf]").get_attribute("value")
    reject_csrf = page.locator(f"#card-{rid} form.reject input[name=csrf]").get_attribute("value")
    fingerprint = page.locator(f"#card-{rid} input[name=fingerprint]").get_attribute("value")
    good = s.cookie  # the session's cookie (the printed token was exchanged for it)
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    body = f"csrf={approve_csrf}&fingerprint={fingerprint}"
    path = f"/review/{rid}/approve"

    assert s.request("GET", "/")[0] == 403  # no token
    assert s.request("GET", "/?token=not-the-token")[0] == 403  # wrong token
    assert s.request("GET", f"/?token={s.token}")[0] == 403  # the right one, already used
    assert s.request("GET", "/", headers={"Cookie": f"ea_review_{s.port}=nope"})[0] == 403
    # No token on a POST, a wrong one, a right one from another origin, none at all.
    assert s.request("POST", path, headers={**form, "Origin": s.origin}, body=body)[0] == 403
    wrong = {**form, "Origin": s.origin, "Cookie": f"ea_review_{s.port}=nope"}
    assert s.request("POST", path, headers=wrong, body=body)[0] == 403
    evil = {**form, "Origin": "http://evil.example", "Cookie": good}
    assert s.request("POST", path, headers=evil, body=body)[0] == 403
    assert s.request("POST", path, headers={**form, "Cookie": good}, body=body)[0] == 403
    # DNS rebinding: another name for 127.0.0.1 is refused even with the token.
    rebound = {**form, "Origin": s.origin, "Cookie": good, "Host": "evil.example"}
    assert s.request("POST", path, headers=rebound, body=body)[0] == 403
    # The right token and origin, but a form token for another action (or none).
    ours = {**form, "Origin": s.origin, "Cookie": good}
    swapped = f"csrf={reject_csrf}&fingerprint={fingerprint}"
    assert s.request("POST", path, headers=ours, body=swapped)[0] == 403
    assert s.request("POST", path, headers=ours, body=f"fingerprint={fingerprint}")[0] == 403
    # No state change over GET, even with everything right.
    # (the printed token is dead after its one exchange, even on a GET)
    assert s.request("GET", f"{path}?token={s.token}&csrf={approve_csrf}")[0] == 403
    assert s.request("GET", f"{path}?csrf={approve_csrf}", headers={"Cookie": good})[0] == 405
    assert s.request("GET", f"/review/{rid}/reject", headers={"Cookie": good})[0] == 405
    # Pages elsewhere that post a form to us from the owner's own browser (CSRF): one
    # on another local port (same site: the cookie goes along, Origin gives it away),
    # one with an opaque origin (data: URL).
    owner = owner_page(site.browser, s)  # the owner has the page open: the cookie is here
    context = owner.context
    evil_form = (
        f'<form method="post" action="{s.origin}{path}">'
        f'<input name="csrf" value="{approve_csrf}"><input name="fingerprint" '
        f'value="{fingerprint}"><button id="go">go</button></form>'
    )
    context.route(
        "http://127.0.0.1:9/evil.html",
        lambda route: route.fulfill(status=200, content_type="text/html", body=evil_form),
    )
    for where in ("http://127.0.0.1:9/evil.html", "data:text/html," + evil_form):
        attacker = context.new_page()
        attacker.goto(where)
        with attacker.expect_navigation():
            attacker.click("#go")
        assert "refused" in attacker.content(), where
    assert _state(site.root) == before


def test_edit_in_the_page_is_validated_as_review_edit_validates(site: Site) -> None:
    rid = site.review_id
    page = _page(site)
    page.click(f"#card-{rid} a.button")
    original = page.locator("textarea").input_value()
    before = _state(site.root)
    page.fill("textarea", original.replace("op: add", "op: sideways"))
    page.click("#editor button[type=submit]")
    assert "op" in page.locator("#edit-error").inner_text()  # names the field
    assert _state(site.root) == before  # nothing recorded
    edited = "When about to list alternatives: give one recommendation."
    text = page.locator("textarea").input_value().replace("op: sideways", "op: add")
    old = load_review(site.root, rid).diff.text
    page.fill("textarea", text.replace(old, edited))
    page.click("#editor button[type=submit]")
    assert "Edited" in page.locator("#done h1").inner_text()
    review = load_review(site.root, rid)
    assert review.edit is not None and review.edit.editor == "owner"
    assert review.diff.text == edited and review.status == "pending"


def test_approve_in_the_page_commits_to_canon_with_provenance(site: Site) -> None:
    rid = site.review_id
    review = load_review(site.root, rid)
    held = watch(site.root).held  # the page holds what the drift watch holds
    page = _page(site)
    card = page.locator(f"#card-{rid}")
    is_held = review.pending.hypothesis in held
    assert card.locator(".hold").count() == (1 if is_held else 0)
    assert card.locator("form.approve").count() == (0 if is_held else 1)
    if is_held:  # looking at the flag is recorded, then the card can be decided
        card.locator(".hold button").click()
        assert "Looked at the drift flag" in page.locator("#done h1").inner_text()
        page.goto(site.server.origin + "/")
        card = page.locator(f"#card-{rid}")
    card.locator("form.approve button").click()
    commit = page.locator("#commit").inner_text()
    repo = git.Repo(site.root.path)
    assert commit == repo.head.commit.hexsha
    trailers = gitrepo.parse_trailers(str(repo.head.commit.message))
    assert trailers["Review-Id"] == rid
    assert trailers["Approved-By"] == "owner"
    assert trailers["Actor"] == "monthly"
    assert trailers["Evidence-Ids"] == ", ".join(review.pending.evidence_ids)
    provenance = page.locator("#provenance").inner_text()
    assert rid in provenance and "owner" in provenance
    identity = (site.root.canon / "identity.yaml").read_text(encoding="utf-8")
    assert review.diff.text in identity  # the human's edit is what landed
    decided = load_review(site.root, rid)
    assert decided.status == "approved" and decided.decision is not None
    assert decided.decision.commit == commit
    records = [r for r in EvidenceLog(site.root).iter_all() if r.kind == "review"]
    assert records[-1].data["action"] == "approve" and records[-1].data["commit"] == commit
    # Exactly what the CLI would accept: verify finds Canon's provenance in order.
    proc = run_proc("--root", str(site.root.path), "verify", env=site.env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # Shown again, the card says it is decided and by which commit; no second approval.
    page.goto(site.server.origin + "/")
    again = page.locator(f"#card-{rid}")
    assert again.locator(".status").text_content() == "approved"
    assert again.locator("form.approve").count() == 0
    assert commit[:10] in again.inner_text()


def test_reject_in_the_page_records_the_reason(site: Site) -> None:
    rid = site.other_probe
    card = _page(site).locator(f"#card-{rid}")
    canon = git.Repo(site.root.path).head.commit.hexsha
    card.locator("input[name=reason]").fill("the new model is right to ask less")
    card.locator("form.reject button").click()
    assert card.page.locator("#done h1").inner_text() == f"Rejected {rid}"
    review = load_review(site.root, rid)
    assert review.status == "rejected" and review.decision is not None
    assert (review.decision.reason, review.decision.approver) == (
        "the new model is right to ask less",
        "owner",
    )
    last = [r for r in EvidenceLog(site.root).iter_all() if r.kind == "review"][-1]
    assert last.data["action"] == "reject" and last.data["review_id"] == rid
    assert git.Repo(site.root.path).head.commit.hexsha == canon  # Canon unchanged
