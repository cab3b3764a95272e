"""Account facts that sign-up, the CLI, team invites and sign-in all use, with no rules of their
own (so any area may import them without importing another area)."""

from __future__ import annotations

from datetime import timedelta

from pydantic.networks import validate_email
from pydantic_core import PydanticCustomError

# A new company starts on this plan, free for the trial.
TRIAL_PLAN = "start"
TRIAL = timedelta(days=14)


def normalise_email(email: str) -> str:
    """The one spelling of an address under which an account is stored, looked up and counted by
    every per-account limit (issue 41): the address as the API's e-mail type reads it (pydantic's
    own ``validate_email``: the domain through IDNA/NFKC, so ``ani@ｄemo.am`` and ``ani@DEMO.am``
    are ``ani@demo.am``), lower-cased. Text that is no address at all keeps its stripped,
    lower-cased self (it names no account)."""
    try:
        _, address = validate_email(email.strip())
    except PydanticCustomError:
        address = email.strip()
    return address.lower()
