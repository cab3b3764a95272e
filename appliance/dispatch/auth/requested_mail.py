"""The mail asked for by address alone, composed by the mail worker (issue 41).

POST /auth/magic-link and /auth/password/forgot queue one row naming the kind and the address,
the same whether or not an account has it (common/mail.py ``enqueue_composed``); no account is
looked up while the request is answered. The worker calls the composer below inside its write
transaction: with an account, the link is issued there and the message composed (its token then
rests sealed until sent); without one, nothing is sent and the row goes."""

from __future__ import annotations

import functools

from appliance.common.mail import Composer
from appliance.dispatch.auth import links, mail_texts
from appliance.dispatch.auth.service import login_link_url, password_link_url
from appliance.dispatch.models import User
from appliance.dispatch.runtime import DispatchRuntime

MAGIC_LINK = "magic_link"
PASSWORD_RESET = "password_reset"


def _magic_link(rt: DispatchRuntime, address: str) -> tuple[str, str, str] | None:
    user = User.get_or_none(User.email == address)
    if user is None:
        return None
    token, _ = links.issue("magic", links.MAGIC_LIFETIME, user=user)
    subject, text = mail_texts.mail("magic_link", user.language, link=login_link_url(rt, token))
    return user.email, subject, text


def _password_reset(rt: DispatchRuntime, address: str) -> tuple[str, str, str] | None:
    user = User.get_or_none(User.email == address)
    if user is None:
        return None
    token, _ = links.issue("password", links.PASSWORD_LINK_LIFETIME, user=user, email=user.email)
    subject, text = mail_texts.mail("password_reset", user.language, link=password_link_url(rt, token))
    return user.email, subject, text


def composers(rt: DispatchRuntime) -> dict[str, Composer]:
    return {
        MAGIC_LINK: functools.partial(_magic_link, rt),
        PASSWORD_RESET: functools.partial(_password_reset, rt),
    }
