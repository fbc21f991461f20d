"""The instructor's side: nbgrader assignment, notebook, cells, batch, the Gradescope autograder; imports check, sandbox and the basics."""
