"""The instructor's side: batch, reports, Gradescope, the student's kit, nbgrader/ (the nbgrader wing); imports check, sandbox, basics."""
