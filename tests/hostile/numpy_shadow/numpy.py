"""Would shadow the real numpy if the folder were on sys.path."""

import sys

sys.exit("numpy.py from the submission folder was imported")
