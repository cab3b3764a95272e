"""The pages a person opens from an email: /login?token= and /invite/<token>."""
