"""Route plans: suggestions by the solver, re-timing, moving stops and atomic application."""
