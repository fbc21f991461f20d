#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image (Ubuntu 22.04).
# It gives the kit a Python environment of its own and leaves the system python3 as it is.
set -euo pipefail

source_dir="${ATTENTION_BY_HAND_AUTOGRADER_ROOT:-/autograder}/source"
venv=/opt/attention-by-hand/venv
export DEBIAN_FRONTEND=noninteractive

apt-get update
# The kit needs Python 3.11 or newer; Ubuntu 22.04's python3 is 3.10, so use its python3.11 package.
if python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    python=python3
    apt-get install -y python3-venv python3-pip
else
    python=python3.11
    apt-get install -y python3.11 python3.11-venv
fi
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet -e "$source_dir"

# bubblewrap confines the students' code where the kernel allows it; grading goes on without it.
apt-get install -y bubblewrap || echo "setup.sh: bubblewrap could not be installed; grading goes on without it."

# Only root may read the kit's source: the reference solutions and the hidden checks.
chmod -R go-rwx "$source_dir"

# The build fails here, rather than at the first submission, if the kit cannot grade.
"$venv/bin/python" -m grader check --solutions
