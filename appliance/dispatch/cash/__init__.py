"""Cash handover: settlements confirmed by dispatchers."""
