"""The serving code moved to the appliance/serving/ package; these names stay importable from here
for the code that still imports them as ``appliance.server``."""

from appliance.serving.balance import ConnectionBalance
from appliance.serving.listener import Listener
from appliance.serving.process import Worker, _private_data_dir, serve
from appliance.serving.signals import STOP_SIGNALS, stop_signals_held
from appliance.serving.startup_warnings import deployment_warnings, link_warnings
from appliance.serving.supervisor import listening_socket, restart_delay, serve_processes, watch_heartbeats
from appliance.serving.task_queue import _MostRecentlyIdleFirst

__all__ = [
    "STOP_SIGNALS",
    "ConnectionBalance",
    "Listener",
    "Worker",
    "_MostRecentlyIdleFirst",
    "_private_data_dir",
    "deployment_warnings",
    "link_warnings",
    "listening_socket",
    "restart_delay",
    "serve",
    "serve_processes",
    "stop_signals_held",
    "watch_heartbeats",
]
