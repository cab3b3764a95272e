"""A real HTTPS webhook receiver on loopback, with its own test certificate authority."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def make_ca_and_server_cert(directory: Path) -> tuple[Path, Path, Path]:
    """(ca.pem, server.pem, server.key) for localhost and 127.0.0.1, signed by a fresh test CA."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "appliance test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_path, cert_path, key_path = directory / "ca.pem", directory / "server.pem", directory / "server.key"
    ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return ca_path, cert_path, key_path


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float = field(default_factory=time.time)  # when it arrived (unix seconds)


@dataclass
class Receiver:
    url: str
    ca_file: Path
    received: list[Received] = field(default_factory=list)
    # next statuses, or "hang" (3 s, then 200), "hang:SECONDS", "trickle" (a 200 answer a byte
    # every 0.2 s), "close" (a 200 that closes the connection) or "drop" (the connection closed
    # with no answer); then 200
    answers: list[int | str] = field(default_factory=list)
    # a request to one of these paths waits until its event is set, then answers 200
    held: dict[str, threading.Event] = field(default_factory=dict)
    connections: int = 0  # TLS connections accepted (one handshake each): keep-alive is HTTP/1.1's


@contextmanager
def tls_receiver(directory: Path, path: str = "/hooks/engine") -> Iterator[Receiver]:
    ca_path, cert_path, key_path = make_ca_and_server_cert(directory)
    state: Receiver

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # connections are kept unless an answer closes them
        # The status line and headers, then the body, are two writes: with Nagle's algorithm the
        # second waits for the client's delayed ACK (40 ms) on a kept connection.
        disable_nagle_algorithm = True

        def setup(self) -> None:
            state.connections += 1  # under the GIL; one accepting thread
            super().setup()

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            state.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            hold = state.held.get(self.path)
            if hold is not None:
                hold.wait()
            answer = state.answers.pop(0) if state.answers and hold is None else 200
            if answer == "drop":
                self.close_connection = True
                return
            if answer == "trickle":  # a 200, a byte every 0.2 s (8 s in all): no read waits 1 s
                try:
                    for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok":
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(0.2)
                except OSError:
                    pass  # the sender gave up on us
                self.close_connection = True
                return
            if isinstance(answer, str) and answer.startswith("hang"):
                time.sleep(float(answer.partition(":")[2] or 3))
                answer = 200
            if answer == "close":
                self.close_connection = True  # and says so: "Connection: close"
                answer = 200
            self.send_response(int(answer))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    state = Receiver(f"https://localhost:{server.server_address[1]}{path}", ca_path)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
