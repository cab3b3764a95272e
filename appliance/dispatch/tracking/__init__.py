"""Recipient tracking: links, the public view, ratings and late notices."""
