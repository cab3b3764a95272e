"""Readiness of the road-routing engine (reports not_built until `appliance routing build`)."""

from __future__ import annotations

from pathlib import Path

from appliance.common.health import Check, Probe


def routing_probe(data_dir: Path, engine: str, url: str) -> Probe:
    def probe() -> Check:
        if engine == "none":
            return Check("fail", "road routing is switched off; estimates use straight lines")
        if engine == "embedded":
            if not (Path(data_dir) / "routing" / "current").exists():
                return Check("not_built", "no road data built: run `appliance routing build --pbf FILE`")
            return Check("fail", "the embedded routing engine is not available in this build")
        return Check("fail", f"the {engine} routing server at {url} is not supported in this build")

    return probe
