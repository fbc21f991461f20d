"""The nbgrader wing: assignment, notebook, cells, autograde, execute, kernel, collect; imports course, check, sandbox, basics."""
