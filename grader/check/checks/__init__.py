"""The checks, one pytest-style file per exercise in public/ (both kits) and hidden/ (the full kit only); run by grader.check.runner."""
