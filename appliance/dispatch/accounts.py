"""Account facts that sign-up, the CLI, team invites and sign-in all use, with no rules of their
own (so any area may import them without importing another area)."""

from __future__ import annotations

from datetime import timedelta

# A new company starts on this plan, free for the trial.
TRIAL_PLAN = "start"
TRIAL = timedelta(days=14)


def normalise_email(email: str) -> str:
    """The one spelling of an address under which an account is stored and looked up."""
    return email.strip().lower()
