"""Ends the process while it is imported."""

import os

os._exit(0)
