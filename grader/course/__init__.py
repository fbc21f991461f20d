"""The instructor's side: nbgrader assignment, notebook, cells, batch; imports check, sandbox and the basics."""
