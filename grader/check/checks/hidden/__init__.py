"""The hidden checks: the reference on drawn inputs and the known mistakes; in the full kit only, never released."""
