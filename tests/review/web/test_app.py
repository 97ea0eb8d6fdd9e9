"""The review page's app (``review/web/app.py``) answered in process: the guard's doors
(Host, the one-use token, the session cookie, Origin, the form token) and a decision made
through the page.  ``test_serve.py`` and ``tests/review/test_web*.py`` drive it for real."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import pytest

from evolving_agent.paths import MemoryRoot
from evolving_agent.review.store import load_review
from evolving_agent.review.web.app import SECURITY_HEADERS, Settings, create_app
from tests.helpers.asgi import Reply, request
from tests.helpers.review import add, queue, set_identity
from tests.helpers.roots import fresh_root

RID = "rev-2026-11-1"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    root: MemoryRoot = fresh_root(tmp_path / "memory")
    set_identity(root)
    queue(root, RID, add("Ask before offering options."))
    return Settings(root=root, port=8765, approver="alice", host="127.9.8.7")


def _get(s: Settings, url: str, **headers: str) -> Reply:
    return request(create_app(s), "GET", url, headers={"host": f"{s.host}:{s.port}", **headers})


def _session(s: Settings) -> dict[str, str]:
    return {"cookie": f"{s.cookie}={s.session}"}


def _post(s: Settings, path: str, form: dict[str, str], **headers: str) -> Reply:
    head = {
        "host": f"{s.host}:{s.port}",
        "origin": s.origin,
        **_session(s),
        "content-type": "application/x-www-form-urlencoded",
        **headers,
    }
    return request(create_app(s), "POST", path, headers=head, body=urlencode(form).encode())


def test_the_token_is_exchanged_once_for_a_cookie_of_this_address(settings: Settings) -> None:
    first = _get(settings, f"/?token={settings.token}&month=2026-11")
    assert first.status == 303 and first.headers["location"] == "/?month=2026-11"
    cookie = first.headers["set-cookie"]
    assert cookie.startswith(f"{settings.cookie}={settings.session};")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Domain" not in cookie
    again = _get(settings, f"/?token={settings.token}")
    assert again.status == 403 and "already used once" in again.text


def test_every_door_without_the_right_key_is_refused(settings: Settings) -> None:
    assert (
        "unexpected Host"
        in request(
            create_app(settings),
            "GET",
            "/",
            headers={"host": f"127.0.0.1:{settings.port}", **_session(settings)},
        ).text
    )
    assert _get(settings, "/").status == 403  # no cookie
    assert "wrong token" in _get(settings, "/?token=guess").text
    assert _get(settings, "/", cookie=f"{settings.cookie}=guess").status == 403
    form = {"csrf": settings.csrf("reject", RID), "reason": "no"}
    other = _post(settings, f"/review/{RID}/reject", form, origin="http://evil.example")
    assert other.status == 403 and "another origin" in other.text
    forged = _post(settings, f"/review/{RID}/reject", {**form, "csrf": "0" * 64})
    assert forged.status == 403 and "form token" in forged.text
    # The form token is bound to its action and target.
    swapped = _post(
        settings, f"/review/{RID}/reject", {**form, "csrf": settings.csrf("approve", RID)}
    )
    assert swapped.status == 403
    assert load_review(settings.root, RID).status == "pending"


@pytest.mark.parametrize("action", ["approve", "reject", "edit"])
def test_each_review_form_takes_only_its_own_token_for_its_own_review(
    settings: Settings, action: str
) -> None:
    # approve, reject and edit check their form through one review_form.
    path = f"/review/{RID}/{action}"
    others = [a for a in ("approve", "reject", "edit") if a != action]
    for csrf in ["", *(settings.csrf(a, RID) for a in others), settings.csrf(action, "rev-x")]:
        refused = _post(settings, path, {"csrf": csrf, "reason": "no", "text": "values: []"})
        assert refused.status == 403 and "form token" in refused.text, (action, csrf)
    assert load_review(settings.root, RID).status == "pending"


def test_the_page_is_served_with_the_security_headers(settings: Settings) -> None:
    page = _get(settings, "/?month=2026-11", **_session(settings))
    assert page.status == 200 and RID in page.text
    for name, value in SECURITY_HEADERS.items():
        assert page.headers[name.lower()] == value


def test_a_reject_through_the_page_is_the_same_decision_the_cli_makes(settings: Settings) -> None:
    form = {"csrf": settings.csrf("reject", RID), "reason": "too broad"}
    done = _post(settings, f"/review/{RID}/reject", form)
    assert done.status == 200 and "<q>too broad</q>" in done.text
    review = load_review(settings.root, RID)
    assert review.status == "rejected" and review.decision is not None
    assert (review.decision.reason, review.decision.approver) == ("too broad", "alice")
    twice = _post(settings, f"/review/{RID}/reject", form)
    assert twice.status == 409 and "already rejected" in twice.text
