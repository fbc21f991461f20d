"""Running the checks (public; hidden in the full kit), telling the student: runner, results, report, JUnit XML, diagnosis, cache, checks; imports sandbox and the basics."""
