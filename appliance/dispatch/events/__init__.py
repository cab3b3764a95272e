"""Realtime events: an append-only table whose ids are the stream's cursor."""
