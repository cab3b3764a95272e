"""Orders: creation, editing, listing by working day, assignment and the state machine."""
