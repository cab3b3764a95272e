"""The console and courier app pages are served with a strict Content-Security-Policy (no inline
script unless hashed, no eval), and / leads to the console. No browser needed."""

from __future__ import annotations

import re

from appliance.common.assets import static_dir
from appliance.dispatch.pages.csp import inline_hashes


def _directives(response) -> dict[str, list[str]]:
    policy = response.headers["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in policy.split("; ")}


def test_the_root_redirects_to_the_console(dispatch_client) -> None:
    response = dispatch_client.get("/")
    assert response.status_code == 302 and response.headers["Location"].endswith("/console/")
    assert dispatch_client.get("/console").headers["Location"].endswith("/console/")


def test_every_page_answers_with_a_policy_that_refuses_inline_and_eval(dispatch_client) -> None:
    for path in ("/console/", "/app/", "/login?token=x", "/invite/" + "t" * 40, "/t/" + "x" * 43):
        response = dispatch_client.get(path)
        assert response.status_code == 200, path
        assert response.mimetype == "text/html"
        directives = _directives(response)
        assert directives["default-src"] == ["'none'"], path
        assert not {"'unsafe-inline'", "'unsafe-eval'"} & set(directives["script-src"])
        assert "'unsafe-inline'" not in directives["style-src"]
        assert directives["frame-ancestors"] == ["'none'"] and directives["object-src"] == ["'none'"]
        assert response.headers["Referrer-Policy"] == "no-referrer"


def test_inline_blocks_are_allowed_by_their_exact_hash(dispatch_client) -> None:
    directives = _directives(dispatch_client.get("/t/" + "x" * 43))
    scripts, styles = inline_hashes(static_dir() / "track.html")
    # The tracking page's script is a file of its own (cached, compressed); its small style stays inline.
    assert not scripts and directives["script-src"] == ["'self'"]
    assert styles and set(styles) <= set(directives["style-src"])
    # The console has no inline code at all: only 'self'.
    console = _directives(dispatch_client.get("/console/"))
    assert console["script-src"] == ["'self'"] and console["style-src"] == ["'self'"]
    html = dispatch_client.get("/console/").get_data(as_text=True)
    assert not re.search(r"<script(?![^>]*\bsrc=)", html) and "<style" not in html and "style=" not in html


def test_the_console_assets_are_served_and_nothing_outside_them(dispatch_client) -> None:
    response = dispatch_client.get("/console/console.js")
    assert response.status_code == 200 and "javascript" in response.mimetype
    assert dispatch_client.get("/console/../../pyproject.toml").status_code == 404
    assert dispatch_client.get("/console/index.html").status_code == 404  # pages only at their route


def test_the_policy_names_the_object_store_so_presigned_uploads_work(data_dir) -> None:
    from appliance.dispatch.pages.csp import policy
    from appliance.settings import load_settings

    settings = load_settings(
        {
            "data_dir": str(data_dir),
            "s3_endpoint": "https://objects.example.am:9000",
            "s3_bucket": "b",
            "s3_access_key": "k",
            "s3_secret_key": "s",
        },
        environ={},
    )
    text = policy(settings)
    assert "connect-src 'self' https://objects.example.am:9000" in text


def test_the_map_debug_page_answers_only_this_machine(dispatch_client) -> None:
    local = dispatch_client.get("/static/map-check.html")
    assert local.status_code == 200 and "Content-Security-Policy" in local.headers
    remote = dispatch_client.get("/static/map-check.html", environ_base={"REMOTE_ADDR": "203.0.113.9"})
    assert remote.status_code == 404
    proxied = dispatch_client.get("/static/map-check.html", headers={"X-Forwarded-For": "203.0.113.9"})
    assert proxied.status_code == 404
    elsewhere = {"REMOTE_ADDR": "203.0.113.9"}
    assert dispatch_client.get("/static/app.css", environ_base=elsewhere).status_code == 200


def test_no_page_answers_under_static_without_its_policy(dispatch_client) -> None:
    pages = sorted(p.relative_to(static_dir()).as_posix() for p in static_dir().rglob("*.html"))
    assert {"console/index.html", "app/index.html", "login.html", "invite.html", "track.html"} <= set(pages)
    for page in pages:
        response = dispatch_client.get("/static/" + page, environ_base={"REMOTE_ADDR": "203.0.113.9"})
        assert response.status_code == 404, page
    assert dispatch_client.get("/static/LOGIN.HTML").status_code == 404
    assert dispatch_client.get("/static/js/api.js").status_code == 200
