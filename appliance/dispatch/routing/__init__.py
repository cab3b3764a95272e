"""Road routing: the engines behind one small interface, and the straight-line fallback."""
