"""Sign-in, sessions and the guards that every dispatch route uses."""
