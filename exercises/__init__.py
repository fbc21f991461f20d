"""Your attention, by hand: fill in the five modules in lesson order.

scores -> masking -> softmax -> heads -> training. Check your work with
`grader check`; `grader hint EXERCISE` helps when you are stuck.
"""
