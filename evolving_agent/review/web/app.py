"""The owner's review page: a Starlette app over one memory root, for one person.

Every request passes :class:`Guard` first:

* the ``Host`` header must be the address we print (``127.A.B.C:PORT``, a loopback
  address drawn at random for each run — see :mod:`.serve`): a page on another site
  that re-points its own name at loopback (DNS rebinding) is refused;
* the printed token is good for **one** exchange: the first GET with it sets an
  HttpOnly, SameSite=Strict, host-only cookie holding a *different* secret (the
  session's) and cleans the address bar; the token is then dead (403 on reuse).
  Cookies are not isolated by port, and SameSite counts every port of a host as one
  site, so a cookie set by ``127.0.0.1`` would reach any other server there; set by
  this run's own random address, it reaches no server on ``127.0.0.1`` or elsewhere.
  Without the session cookie (or the unused token), or with a wrong one, 403;
* a state change is a POST, never a GET; a POST must carry ``Origin`` equal to ours and
  a per-form CSRF token (an HMAC of the action and its target under a secret that never
  leaves the process).

Decisions go through the very functions ``review approve / edit / reject`` call, as the
human, so the page has no authority of its own: the monthly limit, the removal share, the
provenance trailers and the Evidence records are theirs.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from evolving_agent.errors import EvolvingAgentError
from evolving_agent.memory.canon.canon import IDENTITY_FILE
from evolving_agent.memory.canon.canon_diff import describe
from evolving_agent.paths import MemoryRoot
from evolving_agent.review import drift
from evolving_agent.review.actions import edit_text, record_edit, reject_review
from evolving_agent.review.approve import approve_review, plan_approval
from evolving_agent.review.glance import default_month, month_bounds, month_glance
from evolving_agent.review.history import canon_show
from evolving_agent.review.hold import acknowledge, holds
from evolving_agent.review.web import svg
from evolving_agent.review.web.cards import all_cards, build_card, fingerprint_of
from evolving_agent.review.web.text import visible

MAX_BODY = 256 * 1024
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


@dataclass
class Settings:
    """What one serving process knows: its root, its address, its secrets."""

    root: MemoryRoot
    port: int
    approver: str
    host: str = "127.0.0.1"
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    session: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    csrf_key: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    token_used: bool = False
    on_exchange: Callable[[], None] | None = None  # e.g. remove the --open file

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.origin}/?token={self.token}"

    @property
    def cookie(self) -> str:
        return f"ea_review_{self.port}"

    def csrf(self, action: str, target: str) -> str:
        msg = f"{action}\0{target}".encode()
        return hmac.new(self.csrf_key, msg, hashlib.sha256).hexdigest()

    def csrf_ok(self, action: str, target: str, given: str) -> bool:
        return hmac.compare_digest(self.csrf(action, target), given)


def _refuse(status: int, why: str) -> Response:
    return PlainTextResponse(f"refused: {why}\n", status_code=status, headers=SECURITY_HEADERS)


class Guard(BaseHTTPMiddleware):
    """Host, token and origin checks for every request (see the module docstring)."""

    def __init__(self, app: Any, settings: Settings) -> None:
        super().__init__(app)
        self.s = settings

    async def dispatch(
        self, request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        s = self.s
        if request.headers.get("host") != f"{s.host}:{s.port}":
            return _refuse(403, "unexpected Host header (open the printed address)")
        given = request.query_params.get("token")
        cookie = request.cookies.get(s.cookie, "")
        if given is not None:
            if not hmac.compare_digest(given, s.token):
                return _refuse(403, "wrong token")
            if s.token_used:
                return _refuse(
                    403, "this token was already used once (restart 'review serve' for a new one)"
                )
            if request.method != "GET":
                return _refuse(403, "the token is exchanged by opening the printed address")
            # The one exchange: the token dies, a session secret goes into a cookie of
            # this run's own address, and the address bar and history lose the token.
            s.token_used = True
            if s.on_exchange is not None:
                s.on_exchange()
            rest = {k: v for k, v in request.query_params.items() if k != "token"}
            target = request.url.path + (f"?{urlencode(rest)}" if rest else "")
            resp = RedirectResponse(target, status_code=303, headers=SECURITY_HEADERS)
            resp.set_cookie(s.cookie, s.session, httponly=True, samesite="strict", path="/")
            return resp
        elif not (cookie and hmac.compare_digest(cookie, s.session)):
            return _refuse(403, "no token (open the address 'review serve' printed)")
        if request.method not in ("GET", "HEAD"):
            if request.headers.get("origin") != s.origin:
                return _refuse(403, "request from another origin")
        response = await call_next(request)
        for k, v in SECURITY_HEADERS.items():
            response.headers.setdefault(k, v)
        return response


def _finalize(value: Any) -> Any:
    """Every printed value: root text with invisible characters made visible."""
    if isinstance(value, Markup) or not isinstance(value, str):
        return value
    return visible(value)


def _environment() -> Environment:
    here = Path(str(resources.files("evolving_agent.review.web")))
    env = Environment(
        loader=FileSystemLoader(str(here / "templates")),
        autoescape=select_autoescape(default=True, default_for_string=True),
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["describe"] = describe
    return env


async def _form(request: Request) -> dict[str, str] | None:
    body = await request.body()
    if len(body) > MAX_BODY:
        return None
    try:
        parsed = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError:
        return None
    return {k: v[0] for k, v in parsed.items()}


def _shift(month: str, by: int) -> str:
    first, _ = month_bounds(month)
    n = first.year * 12 + first.month - 1 + by
    return f"{n // 12:04d}-{n % 12 + 1:02d}"


def create_app(settings: Settings) -> Starlette:
    env = _environment()
    root = settings.root

    def render(name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        html = env.get_template(name).render(csrf=settings.csrf, **ctx)
        return HTMLResponse(html, status_code=status)

    def drift_report(month: str) -> drift.DriftReport:
        first, last = month_bounds(month)
        from datetime import timedelta

        return drift.watch(root, start=first - timedelta(days=14), end=last)

    async def index(request: Request) -> Response:
        try:
            month = request.query_params.get("month") or default_month(root)
            glance = month_glance(root, month)
            report = drift_report(month)
            held = holds(root)  # what holds a review now, whichever month is shown
            cards = all_cards(root, held)
        except EvolvingAgentError as exc:
            return render("error.html", 400, message=str(exc))
        return render(
            "index.html",
            month=month,
            glance=glance,
            report=report,
            held=held,
            cards=cards,
            friction_svg=svg.friction_chart(glance),
            lanes_svg=svg.state_lanes(glance),
            legend=svg.state_legend(),
            carry_key=svg.carry_key(glance),
            prev_month=_shift(month, -1),
            next_month=_shift(month, 1),
            root=str(root.path),
            root_short="/".join(root.path.parts[-2:]),
            approver=settings.approver,
        )

    def bad_form() -> Response:
        return _refuse(403, "missing or wrong form token (reload the page and try again)")

    async def review_form(request: Request, action: str) -> tuple[str, dict[str, str] | None]:
        """The review in the path and the posted form of ``action`` on it; the form is
        ``None`` when its token is missing or wrong (or the body is no form): refuse it."""
        form = await _form(request)
        rid: str = request.path_params["rid"]
        if form is None or not settings.csrf_ok(action, rid, form.get("csrf", "")):
            return rid, None
        return rid, form

    async def approve(request: Request) -> Response:
        rid, form = await review_form(request, "approve")
        if form is None:
            return bad_form()
        try:
            plan = plan_approval(root, rid)  # refuses a review the drift watch holds
            if form.get("fingerprint", "") != fingerprint_of(plan):
                return render(
                    "error.html",
                    409,
                    message=f"Canon or review {rid} changed since the page was shown; "
                    "nothing was written. Reload and look again.",
                )
            typed = form.get("confirm_id", "").strip()
            if plan.needs_removal_confirm and typed != rid:
                return render(
                    "error.html",
                    409,
                    message=f"{rid} removes a large share of Canon; type its id in the box "
                    "to confirm. Nothing was written.",
                )
            result = approve_review(
                root,
                rid,
                approver=settings.approver,
                allow_large_removal=plan.needs_removal_confirm,
                confirmed=plan,
            )
            shown = canon_show(root, result.commit)
        except EvolvingAgentError as exc:
            return render("error.html", 409, message=str(exc))
        return render("done.html", verb="approved", rid=rid, result=result, shown=shown)

    async def reject(request: Request) -> Response:
        rid, form = await review_form(request, "reject")
        if form is None:
            return bad_form()
        try:
            decision = reject_review(
                root, rid, reason=form.get("reason", ""), approver=settings.approver
            )
        except EvolvingAgentError as exc:
            return render("error.html", 409, message=str(exc))
        return render("done.html", verb="rejected", rid=rid, decision=decision)

    async def edit_page(request: Request) -> Response:
        rid = request.path_params["rid"]
        try:
            text = edit_text(root, rid)
            card = build_card(root, rid, {})
        except EvolvingAgentError as exc:
            return render("error.html", 404, message=str(exc))
        return render("edit.html", rid=rid, text=text, card=card, error="")

    async def edit_save(request: Request) -> Response:
        rid, form = await review_form(request, "edit")
        if form is None:
            return bad_form()
        text = form.get("text", "").replace("\r\n", "\n")
        try:
            edit = record_edit(root, rid, text, editor=settings.approver)
        except EvolvingAgentError as exc:
            try:
                card = build_card(root, rid, {})
            except EvolvingAgentError:
                return render("error.html", 409, message=str(exc))
            return render("edit.html", 400, rid=rid, text=text, card=card, error=str(exc))
        return render("done.html", verb="edited", rid=rid, edit=edit)

    async def ack(request: Request) -> Response:
        form = await _form(request)
        hid = (form or {}).get("hypothesis", "")
        if form is None or not settings.csrf_ok("ack", hid, form.get("csrf", "")):
            return bad_form()
        try:
            result = acknowledge(root, hid, by=settings.approver)  # as 'drift ack' does
        except EvolvingAgentError as exc:
            return render("error.html", 409, message=str(exc))
        return render(
            "done.html", verb="acknowledged", rid=hid, ack=result.record_id, flags=result.hold.flags
        )

    static = Path(str(resources.files("evolving_agent.review.web"))) / "static"
    routes = [
        Route("/", index, methods=["GET"]),
        Route("/review/{rid}/approve", approve, methods=["POST"]),
        Route("/review/{rid}/reject", reject, methods=["POST"]),
        Route("/review/{rid}/edit", edit_page, methods=["GET"]),
        Route("/review/{rid}/edit", edit_save, methods=["POST"]),
        Route("/drift/ack", ack, methods=["POST"]),
        Mount("/static", StaticFiles(directory=str(static)), name="static"),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(Guard, settings=settings)])
    app.state.identity_file = IDENTITY_FILE
    return app
