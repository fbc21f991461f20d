"""What runs in the worker, copied whole into its room: it imports nothing outside this folder but the standard library and numpy."""
