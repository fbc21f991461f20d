"""The training job's first lines in its confinement: as a worker's boot (its user, its view), then the job.

Run as `python -I -S -B job_boot.py KIT CONFIG PARENT SPEC` from the job's private room: KIT holds the
worker's modules and the comparison's (no reference, no check), CONFIG is the worker boot's JSON.
"""

import json
import sys


def main() -> None:
    kit, config, parent, spec = sys.argv[1:5]
    config = json.loads(config)
    sys.path[:0] = [kit]  # the room's own copy: nothing of the kit's folder is on the path
    from grader.sandbox.boot import become

    if config["uid"] is not None:
        become(config["uid"])
    sys.path += config["sites"]
    if config.get("landlock"):
        from grader.sandbox.landlock import restrict

        restrict(config["landlock"]["read"], config["landlock"]["write"])
    from grader.compare.job import main as run

    run(parent, spec)


if __name__ == "__main__":
    main()
