"""The grader of Attention by Hand: hidden checks, the comparison, nbgrader export."""

__version__ = "0.1.0"
