"""The student's day: status, watch, hints, welcome; imports check, sandbox and the basics."""
