"""The hidden checks: one pytest file per exercise, run by grader.check.runner, never by the kit's own tests."""
