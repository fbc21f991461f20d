"""Running the hidden checks and telling the student: runner, results, report, diagnosis, verdict cache, the checks; imports sandbox and the basics."""
