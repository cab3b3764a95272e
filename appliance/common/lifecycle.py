"""Process-wide stop signal: long-lived work (event streams, workers) ends when it is set."""

import threading

stopping = threading.Event()
