"""The two-node tests run in their own stage (`make test-nodes`, which starts a throwaway PostgreSQL
server and sets NODES_TEST=1); the ordinary `make test` collects nothing here."""

import os

if not os.environ.get("NODES_TEST"):
    collect_ignore_glob = ["test_*.py"]
