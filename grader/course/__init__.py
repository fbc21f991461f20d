"""The instructor's side: nbgrader assignment, notebook, cells, batch, Gradescope, the student's kit; imports check, sandbox, basics."""
