"""The language of a request's answer: hy, ru or en.

The signed-in user's own language decides (PATCH /me: the language they chose for the console, the
courier app and their e-mails; a browser's ``Accept-Language`` is the device's, often English,
and not their choice). Without a signed-in user (public pages, sign-in, integration keys) the
``Accept-Language`` header decides, and English, the API's own language, when it names none of
hy, ru and en.
"""

from __future__ import annotations

from flask import g, has_request_context, request

from appliance.common.problems import ApiError

LANGUAGES = ("hy", "ru", "en")
DEFAULT = "en"


def from_header(header: str | None) -> str | None:
    """The best of hy, ru and en an ``Accept-Language`` header asks for (highest q, then the
    first named), or None."""
    best: tuple[float, int, str] | None = None
    for order, part in enumerate((header or "").split(",")):
        tag, _, params = part.strip().partition(";")
        code = tag.strip().lower()[:2]
        if code not in LANGUAGES or tag.strip()[2:3] not in ("", "-"):
            continue
        quality = 1.0
        name, _, value = params.strip().partition("=")
        if name.strip() == "q":
            try:
                quality = float(value)
            except ValueError:
                quality = 0.0
        if quality > 0 and (best is None or (quality, -order) > best[:2]):
            best = (quality, -order, code)
    return best[2] if best else None


def of_user(user: object) -> str | None:
    lang = getattr(user, "language", None)
    return lang if lang in LANGUAGES else None


def _signed_in_language() -> str | None:
    caller = g.get("caller")
    if caller is None and request.headers.get("Authorization", "")[:7].lower() == "bearer ":
        # Body and query are read before the guard: a validation Problem comes before the caller
        # is known. Ask who it is now (an invalid token is simply no language).
        from appliance.dispatch.auth.guards import authenticate_any  # the guards import Problems

        try:
            caller = authenticate_any(keys=True)
        except ApiError:
            return None
    return of_user(getattr(caller, "user", None))


def of_request(*, look_up_user: bool = True) -> str:
    """The answer's language; ``look_up_user`` False never reads the database (a Problem about
    the database itself)."""
    if not has_request_context():
        return DEFAULT
    if look_up_user:
        try:
            signed_in = _signed_in_language()
        except Exception:
            signed_in = None
        if signed_in:
            return signed_in
    return from_header(request.headers.get("Accept-Language")) or DEFAULT
