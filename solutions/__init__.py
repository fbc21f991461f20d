"""The reference solutions: the same five modules as exercises/, filled in."""
