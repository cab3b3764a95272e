"""The ceiling: a bare Flask + waitress + SQLite (WAL) app, the same stack as the appliance with
nothing of its own. GET /ok answers {"ok": true}; POST /batch inserts a JSON batch of points in
one transaction (the shape of POST /courier/location) and answers 202.

    python bench/http/bare_app.py PORT DB_PATH [THREADS]
"""

from __future__ import annotations

import sqlite3
import sys
import threading

from flask import Flask, jsonify, request
from waitress import serve


def create_app(db_path: str) -> Flask:
    app = Flask(__name__)
    local = threading.local()
    with sqlite3.connect(db_path) as setup:
        setup.execute("PRAGMA journal_mode=WAL")
        setup.execute(
            "CREATE TABLE IF NOT EXISTS point (id INTEGER PRIMARY KEY, courier_id INTEGER, "
            "lat REAL, lon REAL, captured_at TEXT, UNIQUE (courier_id, captured_at))"
        )

    def db() -> sqlite3.Connection:
        conn = getattr(local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(db_path, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout=5000")
            conn.execute("PRAGMA synchronous=NORMAL")
            local.conn = conn
        return conn

    @app.get("/ok")
    def ok():
        return jsonify(ok=True)

    @app.post("/batch")
    def batch():
        points = request.get_json()["points"]
        conn = db()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                "INSERT OR IGNORE INTO point (courier_id, lat, lon, captured_at) VALUES (1, ?, ?, ?)",
                [(p["lat"], p["lon"], p["capturedAt"]) for p in points],
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return jsonify(accepted=len(points)), 202

    return app


if __name__ == "__main__":
    port, path = int(sys.argv[1]), sys.argv[2]
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    serve(create_app(path), host="127.0.0.1", port=port, threads=threads, ident="bare")
