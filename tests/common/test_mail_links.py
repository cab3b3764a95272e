"""The links of a queued message: its body is kept with ``{token}`` in place of each link token,
the tokens sealed apart, and the sender puts them back exactly (appliance/common/mail.py)."""

from __future__ import annotations

import pytest

from appliance.common.mail import join_links, redact_links, split_links

# A fixed token: test ids made from a random one differ between pytest-xdist's workers, which
# then refuse to run the session ("Different tests were collected").
TOKEN = "Ulk4EeR41-xj17h7HjpOBgjzu9mJWLbeTocUAoad8fU"


@pytest.mark.parametrize(
    "body",
    [
        f"Sign in: https://x.am/login?token={TOKEN}\n",
        f"Two: https://x.am/invite/{TOKEN} and http://x.am/login?password={TOKEN[::-1]}.",
        f"A literal placeholder: https://x.am/{{token}}/{TOKEN} and {{token}} outside a link",
        f"Braced: https://x.am/a{{{TOKEN}}}b and https://x.am/{{token}}{{token}}",
        "No link at all, {token} as text",
        f"Welcome to Arev {TOKEN} (a name that looks like a token, outside any link)",
    ],
)
def test_a_body_split_from_its_tokens_joins_back_exactly(body: str) -> None:
    redacted, tokens = split_links(body)
    assert redacted == redact_links(body) == redact_links(redacted)  # no token left in a link
    assert join_links(redacted, tokens) == body


def test_tokens_that_do_not_fit_the_body_are_refused() -> None:
    redacted, tokens = split_links(f"https://x.am/login?token={TOKEN}")
    with pytest.raises(ValueError, match="more"):
        join_links(redacted, [*tokens, "extra-token-that-fits-nowhere"])
    with pytest.raises(ValueError, match="fewer"):
        join_links(redacted, [])
