"""Members, invites and member login links."""
