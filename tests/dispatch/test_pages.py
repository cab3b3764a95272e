"""The pages behind emailed links are served as HTML, with the token kept out of referrers."""


def test_the_sign_in_page_is_served(dispatch_client) -> None:
    response = dispatch_client.get("/login?token=abc")
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    assert b'src="/static/js/login-page.js?v=' in response.data  # named with its content hash
    script = dispatch_client.get("/static/js/login-page.js")
    assert script.status_code == 200 and b"/auth/magic-link/verify" in script.data
    assert response.headers["Referrer-Policy"] == "no-referrer"


def test_the_invite_page_is_served_for_any_token(dispatch_client) -> None:
    response = dispatch_client.get("/invite/" + "t" * 40)
    assert response.status_code == 200
    assert b'src="/static/js/invite-page.js?v=' in response.data
    script = dispatch_client.get("/static/js/invite-page.js")
    assert script.status_code == 200 and b"/auth/invite/accept" in script.data


def test_the_shared_stylesheet_is_served(dispatch_client) -> None:
    assert dispatch_client.get("/static/app.css").status_code == 200
    assert dispatch_client.get("/static/../pyproject.toml").status_code == 404
