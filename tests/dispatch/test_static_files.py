"""The pages' static files (issue 49): brotli or gzip as the browser accepts, the same bytes once
decompressed; named by their content hash from the pages and then cached for a year; a changed
module changes the hash of every file that reaches it; the favicon."""

from __future__ import annotations

import gzip
import re

import brotli
import pytest

from appliance.dispatch.pages.assets import AssetTable
from appliance.dispatch.pages.compression import chosen_encoding

MAPLIBRE = "/static/vendor/maplibre-gl/maplibre-gl.js"


def _decoded(response) -> bytes:
    encoding = response.headers.get("Content-Encoding")
    if encoding == "br":
        return brotli.decompress(response.data)
    if encoding == "gzip":
        return gzip.decompress(response.data)
    assert encoding is None
    return response.data


@pytest.mark.parametrize("encoding", ["br", "gzip"])
def test_a_static_file_is_sent_compressed_as_accepted_and_decompresses_to_the_file(
    dispatch_client, encoding
) -> None:
    from appliance.common.assets import static_dir

    accept = "gzip, deflate, br, zstd" if encoding == "br" else "gzip, deflate"
    response = dispatch_client.get(MAPLIBRE, headers={"Accept-Encoding": accept})
    assert response.status_code == 200
    assert response.headers["Content-Encoding"] == encoding
    assert response.headers["Vary"] == "Accept-Encoding"
    assert response.mimetype == "text/javascript"
    original = (static_dir() / "vendor/maplibre-gl/maplibre-gl.js").read_bytes()
    assert _decoded(response) == original
    assert len(response.data) < len(original) / 3  # 930 KiB of script is about 220 KiB on the wire


def test_a_client_that_takes_no_compression_gets_the_file_as_it_is(dispatch_client) -> None:
    for accept in ("identity", "br;q=0, gzip;q=0", None):
        headers = {"Accept-Encoding": accept} if accept else {}
        response = dispatch_client.get("/static/app.css", headers=headers)
        assert response.status_code == 200 and "Content-Encoding" not in response.headers
        assert response.headers["Vary"] == "Accept-Encoding"
        assert b":focus-visible" in response.data


def test_the_encoding_is_chosen_by_accept_encoding_and_its_weights() -> None:
    assert chosen_encoding("gzip, deflate, br") == "br"
    assert chosen_encoding("br;q=0, gzip") == "gzip"
    assert chosen_encoding("gzip;q=0.5, br;q=0") == "gzip"
    assert chosen_encoding("*") == "br"
    assert chosen_encoding("*, br;q=0") == "gzip"
    assert chosen_encoding("deflate") is None
    assert chosen_encoding("") is None
    assert chosen_encoding("gzip;q=nonsense") is None


def test_the_compressed_copy_is_made_once_and_kept_in_the_data_directory(dispatch_client, settings) -> None:
    dispatch_client.get("/static/js/api.js", headers={"Accept-Encoding": "br"})
    kept = list((settings.data_dir / "cache" / "static").glob("*.br"))
    assert len(kept) == 1
    again = dispatch_client.get("/static/js/api.js", headers={"Accept-Encoding": "br"})
    assert again.data == kept[0].read_bytes()


def _references(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="(/(?:static|console|app)/[^"]+)"', html)


def test_pages_name_their_files_by_content_hash_and_those_are_cached_for_a_year(dispatch_client) -> None:
    for path in ("/console/", "/app/", "/login?token=x", "/t/" + "x" * 43):
        page = dispatch_client.get(path, headers={"Accept-Encoding": "identity"})
        assert page.headers["Cache-Control"] in ("no-cache", "no-store"), path  # a release shows at once
        references = [url for url in _references(page.get_data(as_text=True)) if not url.endswith("/")]
        assert references, path
        for url in references:
            assert re.search(r"\?v=[0-9a-f]{16}$", url), url
            response = dispatch_client.get(url)
            assert response.status_code == 200, url
            assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable", url


def test_a_file_asked_for_without_its_current_hash_is_revalidated_not_kept(dispatch_client) -> None:
    for url in ("/static/js/api.js", "/static/js/api.js?v=0000000000000000"):
        response = dispatch_client.get(url)
        assert response.status_code == 200 and response.headers["Cache-Control"] == "no-cache"
    etag = response.headers["ETag"]
    unchanged = dispatch_client.get("/static/js/api.js", headers={"If-None-Match": etag})
    assert unchanged.status_code == 304 and unchanged.data == b""


def test_module_imports_carry_the_hash_of_what_they_import(dispatch_client) -> None:
    script = dispatch_client.get("/console/console.js").get_data(as_text=True)
    assert re.search(r'from "/static/js/api\.js\?v=[0-9a-f]{16}"', script)
    # The service worker stays at its URL with its plain list of paths (its cache keys).
    worker = dispatch_client.get("/app/sw.js")
    assert worker.headers["Cache-Control"] == "no-cache" and b'"/app/app.js"' in worker.data


def test_a_changed_module_changes_the_hash_of_every_file_that_reaches_it(tmp_path) -> None:
    (tmp_path / "js").mkdir()
    (tmp_path / "js" / "words.js").write_text('export const hello = "hello";\n')
    (tmp_path / "js" / "page.js").write_text('import {hello} from "/static/js/words.js";\n')
    (tmp_path / "page.html").write_text('<script type="module" src="/static/js/page.js"></script>\n')
    before = AssetTable(tmp_path).get("page.html")
    (tmp_path / "js" / "words.js").write_text('export const hello = "բարև";\n')
    after = AssetTable(tmp_path).get("page.html")
    assert before is not None and after is not None and before.body != after.body
    # A file that names itself (or a cycle) is named without a hash from inside, never looped on.
    (tmp_path / "js" / "self.js").write_text('import "/static/js/self.js";\n')
    assert AssetTable(tmp_path).get("js/self.js").body == b'import "/static/js/self.js";\n'


def test_nothing_outside_static_is_served(dispatch_client) -> None:
    for url in ("/static/../pyproject.toml", "/static/.hidden", "/static/js/", "/static/track.html"):
        assert dispatch_client.get(url).status_code == 404, url


def test_the_favicon_answers(dispatch_client) -> None:
    response = dispatch_client.get("/favicon.ico")
    assert response.status_code == 200 and response.data[:4] == b"\x00\x00\x01\x00"  # an ICO
    assert response.mimetype in ("image/vnd.microsoft.icon", "image/x-icon")
