"""Running the checks (public; hidden too in the full kit) and telling the student: runner, results, report, JUnit XML, diagnosis, verdict cache, the checks; imports sandbox and the basics."""
