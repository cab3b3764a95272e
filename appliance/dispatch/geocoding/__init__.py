"""The offline address index: streets, house numbers, entrances and named places from the
OpenStreetMap extract the roads are built from, searched with SQLite FTS5 (docs/routing.md)."""
