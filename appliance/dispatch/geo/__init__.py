"""The geo proxies: road route, road matrix and route optimisation, validated."""
