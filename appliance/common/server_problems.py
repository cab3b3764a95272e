"""Problems for the errors waitress answers itself, before any app runs: a malformed request line
(400), request headers over its limit (431), a body over its limit (413).

waitress writes those as text/plain; the appliance's clients expect every error as a Problem. A
server whose channels use ProblemChannel answers them as ``application/problem+json`` with the
members both services' Problems require (dispatch: type, title, status; engine: type, detail,
status, requestId), and a fresh request id, since no app saw the request.
"""

from __future__ import annotations

import json
import uuid

from waitress.channel import HTTPChannel
from waitress.task import ErrorTask

SLUGS = {400: "bad-request", 413: "payload-too-large", 431: "request-header-fields-too-large"}


def problem_body(code: int, reason: str, detail: str) -> bytes:
    body = {
        "type": f"about:blank#{SLUGS.get(code, 'internal-error' if code >= 500 else 'bad-request')}",
        "title": reason,
        "status": code,
        "detail": detail.strip() or reason,
        "requestId": uuid.uuid4().hex,
    }
    return json.dumps(body, separators=(",", ":")).encode()


class ProblemErrorTask(ErrorTask):
    def execute(self) -> None:
        error = self.request.error
        body = problem_body(error.code, error.reason, str(error.body))
        self.status = f"{error.code} {error.reason}"
        self.response_headers.extend(
            [("Content-Type", "application/problem+json"), ("X-Content-Type-Options", "nosniff")]
        )
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class ProblemChannel(HTTPChannel):
    error_task_class = ProblemErrorTask
