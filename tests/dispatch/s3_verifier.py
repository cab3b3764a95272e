"""What an S3 bucket checks of a presigned request, in front of the test S3 server: moto's server
mode stores whatever a presigned PUT sends without checking its signature, so this proxy checks it
the way S3 does (AWS Signature Version 4, query-string form; computed by botocore, an
implementation independent of the MinIO client the appliance signs with): the headers the link
names in X-Amz-SignedHeaders, with the values the client sends, must give the signature in the
link, else 403 SignatureDoesNotMatch and nothing stored. Everything else is passed to moto."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from urllib.parse import parse_qsl, urlsplit
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import requests
from botocore.auth import S3SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from tests.conftest import free_port


def signature_matches(
    method: str, url: str, headers: dict[str, str], *, access_key: str, secret_key: str, region: str
) -> bool:
    parts = urlsplit(url)
    params = dict(parse_qsl(parts.query, keep_blank_values=True))
    if "X-Amz-Signature" not in params:
        return False
    signed = params["X-Amz-SignedHeaders"].split(";")
    sent = {name.lower(): value for name, value in headers.items()}
    query = "&".join(pair for pair in parts.query.split("&") if not pair.startswith("X-Amz-Signature="))
    request = AWSRequest(
        method=method,
        url=parts._replace(query=query).geturl(),
        headers={name: sent.get(name, "") for name in signed if name != "host"},
    )
    request.context["timestamp"] = params["X-Amz-Date"]
    auth = S3SigV4QueryAuth(
        Credentials(access_key, secret_key), "s3", region, expires=int(params["X-Amz-Expires"])
    )
    canonical = auth.canonical_request(request)
    expected = auth.signature(auth.string_to_sign(request, canonical), request)
    return expected == params["X-Amz-Signature"]


class _Quiet(WSGIRequestHandler):
    def log_message(self, *_args) -> None:
        pass


class _Threaded(WSGIServer):
    def process_request(self, request, client_address) -> None:
        threading.Thread(target=self._handle, args=(request, client_address), daemon=True).start()

    def _handle(self, request, client_address) -> None:
        try:
            self.finish_request(request, client_address)
        finally:
            self.shutdown_request(request)


@contextlib.contextmanager
def verifying_proxy(upstream: str, *, access_key: str, secret_key: str, region: str) -> Iterator[str]:
    """A URL that checks presigned signatures, then forwards to ``upstream`` (moto)."""

    def app(environ, start_response):
        method = environ["REQUEST_METHOD"]
        query = environ.get("QUERY_STRING", "")
        path = environ.get("PATH_INFO", "")
        headers = {
            key[5:].replace("_", "-").lower(): value
            for key, value in environ.items()
            if key.startswith("HTTP_")
        }
        for key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            if environ.get(key):
                headers[key.replace("_", "-").lower()] = environ[key]
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        if "X-Amz-Signature=" in query:
            url = f"http://{environ['HTTP_HOST']}{path}?{query}"
            if not signature_matches(
                method, url, headers, access_key=access_key, secret_key=secret_key, region=region
            ):
                start_response("403 Forbidden", [("Content-Type", "application/xml")])
                return [b"<Error><Code>SignatureDoesNotMatch</Code></Error>"]
        forwarded = {k: v for k, v in headers.items() if k not in {"host", "content-length"}}
        answer = requests.request(
            method,
            f"{upstream}{path}" + (f"?{query}" if query else ""),
            headers=forwarded,
            data=body,
            timeout=30,
        )
        start_response(
            f"{answer.status_code} {answer.reason}",
            [
                (k, v)
                for k, v in answer.headers.items()
                if k.lower() in {"content-type", "etag", "last-modified"}
            ],
        )
        return [answer.content]

    port = free_port()
    server = make_server("127.0.0.1", port, app, server_class=_Threaded, handler_class=_Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.shutdown()
        server.server_close()
