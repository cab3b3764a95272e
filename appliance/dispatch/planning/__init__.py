"""Route planning: the vehicle-routing solver behind plan suggestions."""
