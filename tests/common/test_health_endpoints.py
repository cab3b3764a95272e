def test_dispatch_healthz_lists_the_five_checks_and_answers_503_naming_what_is_degraded(
    dispatch_client,
) -> None:
    response = dispatch_client.get("/healthz")
    assert response.status_code == 503
    assert response.mimetype == "application/problem+json"
    body = response.json
    assert (body["type"], body["status"]) == ("about:blank#unavailable", 503)
    assert body["title"] == "Service Unavailable"
    assert set(body["checks"]) == {"routing", "solver", "database", "disk", "tiles"}
    assert body["checks"]["database"]["status"] == "pass"
    assert body["checks"]["routing"]["status"] == "not_built"
    assert set(body["failing"]) == {"routing", "tiles"}


def test_dispatch_healthz_answers_200_when_every_check_passes(dispatch_app, dispatch_client) -> None:
    from appliance.common.health import Check

    health = dispatch_app.extensions["dispatch"].health
    health.register("routing", lambda: Check("pass"))
    health.register("tiles", lambda: Check("pass"))
    response = dispatch_client.get("/healthz")
    assert response.status_code == 200
    assert response.json["status"] == "pass"


def test_a_probe_that_raises_is_reported_as_failing(dispatch_app, dispatch_client) -> None:
    def broken():
        raise OSError("disk gone")

    dispatch_app.extensions["dispatch"].health.register("database", broken)
    body = dispatch_client.get("/healthz").json
    assert body["checks"]["database"]["status"] == "fail"
    assert "disk gone" in body["checks"]["database"]["detail"]


def test_engine_live_answers_pass_without_a_signature(engine_client) -> None:
    response = engine_client.get("/health/live")
    assert response.status_code == 200
    assert response.json == {"status": "pass", "service": "payout-engine"}


def test_engine_ready_reports_the_version_and_the_database(engine_client) -> None:
    from appliance import __version__

    body = engine_client.get("/health/ready").json
    assert body["status"] == "pass"
    assert body["version"] == __version__
    assert body["checks"]["database"] == "pass"


def test_engine_ready_answers_503_when_the_database_is_behind(engine_app, engine_client) -> None:
    from appliance.common.health import Check

    engine_app.extensions["engine"].health.register("database", lambda: Check("fail", "behind"))
    response = engine_client.get("/health/ready")
    assert response.status_code == 503
    assert response.mimetype == "application/problem+json"
    assert response.json["status"] == 503 and response.json["checks"]["database"] == "fail"
    assert response.json["type"] == "about:blank#unavailable" and "database" in response.json["detail"]


def test_both_services_serve_their_openapi_document(dispatch_client, engine_client) -> None:
    dispatch_doc = dispatch_client.get("/openapi.json").json
    assert dispatch_doc["info"]["version"] == "0.5.0"
    assert "/healthz" in dispatch_doc["paths"]
    engine_doc = engine_client.get("/openapi.json").json
    assert "/health/ready" in engine_doc["paths"]


def test_the_dispatch_openapi_document_covers_every_endpoint_of_the_specification(dispatch_client) -> None:
    paths = dispatch_client.get("/openapi.json").json["paths"]
    expected = [
        "/auth/login",
        "/auth/refresh",
        "/auth/logout",
        "/me",
        "/auth/me",
        "/auth/switch-company",
        "/auth/signup",
        "/auth/magic-link",
        "/auth/magic-link/verify",
        "/auth/invite/{token}",
        "/auth/invite/accept",
        "/company",
        "/company/logo/upload-url",
        "/company/depots",
        "/company/depots/{depot_id}",
        "/company/billing",
        "/company/plan",
        "/company/members",
        "/company/members/{user_id}/login-link",
        "/company/members/{user_id}",
        "/company/invites",
        "/company/invites/{invite_id}",
        "/orders",
        "/orders/{order_id}",
        "/orders/{order_id}/events",
        "/orders/{order_id}/proof/photo-url",
        "/orders/{order_id}/tracking",
        "/orders/{order_id}/status",
        "/orders/{order_id}/assign",
        "/orders/{order_id}/notify-late",
        "/track/{token}",
        "/track/{token}/rating",
        "/plans/suggest",
        "/plans/recompute",
        "/plans/move-stop",
        "/plans/apply",
        "/couriers",
        "/couriers/{courier_id}",
        "/couriers/{courier_id}/earnings",
        "/couriers/{courier_id}/shift/end",
        "/couriers/{courier_id}/eta",
        "/courier/location",
        "/courier/location/current",
        "/courier/me",
        "/courier/shift/start",
        "/courier/shift/break",
        "/courier/shift/end",
        "/courier/orders",
        "/courier/orders/{order_id}/status",
        "/courier/orders/{order_id}/otp/verify",
        "/courier/orders/{order_id}/proof/upload-url",
        "/courier/cash",
        "/courier/cash/settle",
        "/courier/earnings",
        "/courier/history",
        "/courier/eta",
        "/cash/settlements",
        "/cash/settlements/{settlement_id}/confirm",
        "/events/latest-cursor",
        "/events",
        "/geo/route",
        "/geo/matrix",
        "/geo/optimize",
        "/healthz",
    ]
    assert [p for p in expected if p not in paths] == []
