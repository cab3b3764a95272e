"""Serving: both WSGI apps with waitress, one serving process or several, until a stop signal.

- ``process.py``: one serving process (``serve``): the listeners, the background workers, the
  graceful stop;
- ``supervisor.py``: several serving processes forked on shared listening sockets
  (``serve_processes``), restarted when they die, watched by their heartbeats;
- ``balance.py``: the open-connection counts and heartbeats the serving processes share, so that
  a new connection goes to the least busy one;
- ``listener.py``: one app on one port (waitress's server with the appliance's channel and limits);
- ``task_queue.py``: waitress's task queue waking the most recently idle thread;
- ``signals.py``: the stop signals kept for the main thread;
- ``startup_warnings.py``: what serve warns about at start.
"""

from appliance.serving.balance import ConnectionBalance
from appliance.serving.listener import Listener
from appliance.serving.process import Worker, serve
from appliance.serving.signals import STOP_SIGNALS, stop_signals_held
from appliance.serving.startup_warnings import deployment_warnings, link_warnings
from appliance.serving.supervisor import listening_socket, restart_delay, serve_processes, watch_heartbeats

__all__ = [
    "STOP_SIGNALS",
    "ConnectionBalance",
    "Listener",
    "Worker",
    "deployment_warnings",
    "link_warnings",
    "listening_socket",
    "restart_delay",
    "serve",
    "serve_processes",
    "stop_signals_held",
    "watch_heartbeats",
]
