"""The unlock, `grader compare`: command, view, models, training job, corpus, plot; imports check, sandbox and the basics."""
