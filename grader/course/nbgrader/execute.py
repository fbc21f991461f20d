"""RunNotebook: nbgrader's Execute for the feedback only, in a confined kernel that cannot lose the grades.

The graded cells are never run (WriteGrades writes them). The first cell that hangs past the cell
timeout, kills the kernel, or sends more output than a cell may (counted as it arrives, not after
the cell), ends the run: the kernel is ended, the cells below it are not run, and the grading goes
on. Afterwards every process the kernel left is ended, and the autograded folder is tidied: no
.hypothesis, no __pycache__ and no link or other special file reaches the feedback.
"""

import ctypes
import os
import shutil
import sys
import time
from pathlib import Path

import psutil
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute
from nbgrader.utils import is_grade
from traitlets import Integer

from grader.course.nbgrader.autograde import LITTER, course_directory
from grader.course.nbgrader.kernel import ConfinedKernelManager
from grader.course.nbgrader.watching import command_line
from grader.sandbox.tree import end_processes

PR_SET_CHILD_SUBREAPER = 36
# bytes of messages one cell may send (an honest plot: 100 KiB), counted as they arrive
CELL_OUTPUT = 4 << 20
NOTEBOOK_OUTPUT = 16 << 20  # bytes of messages all the notebook's cells may send


class RunNotebook(Execute):
    """Run the notebook's own cells for the feedback, in the kit's kernel; graded cells are left to WriteGrades."""

    notebook_timeout = Integer(
        300, help="Seconds for all the notebook's cells together; the cells after that are not run."
    ).tag(config=True)

    def __init__(self, **kwargs):
        # a hung kernel is killed at once, not waited for
        kwargs.setdefault("shutdown_kernel", "immediate")
        super().__init__(**kwargs)
        self.stopped, self.began, self.folder, self.manager = "", 0.0, "", None
        self.flooded, self.cell_bytes, self.notebook_bytes = "", 0, 0

    def create_kernel_manager(self):
        """The kit's confined kernel manager, told which folder the kernel may write and which to hide."""
        if not self.kernel_name:
            self.kernel_name = self.nb.metadata.get("kernelspec", {}).get("name", "python3")
        self.km = self.manager = ConfinedKernelManager(
            parent=self,
            kernel_name=self.kernel_name,
            writable=self.folder,
            hidden=course_root(self),
        )
        return self.km

    def preprocess(self, nb: NotebookNode, resources: dict, km=None):
        self.stopped, self.began = "", time.monotonic()
        self.flooded, self.notebook_bytes = "", 0
        self.folder = str(Path(resources.get("metadata", {}).get("path") or ".").resolve())
        since = time.time()
        become_subreaper()
        try:
            return super().preprocess(nb, resources, km)
        except (
            Exception
        ) as error:  # the kernel did not start, or failed between cells: the grading goes on
            tail = self.manager.log_tail() if self.manager is not None else ""
            self.log.error(
                "The notebook's cells could not all run (%s: %s); its graded cells are graded all the same.\n%s",
                type(error).__name__,
                error,
                tail,
            )
            return nb, resources
        finally:
            if self.manager is not None:
                self.manager.end()  # again, for a kernel that failed to start
            sweep(since)
            tidy(Path(self.folder))

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code" or is_grade(cell) or self.stopped:
            return cell, resources
        if time.monotonic() - self.began > self.notebook_timeout:
            self.stop(
                cell, f"the notebook's cells ran for more than {self.notebook_timeout} s in all"
            )
            return cell, resources
        self.cell_bytes = 0
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            self.stop(
                cell,
                self.flooded
                or "the kernel died while this cell ran (it ended its own process, or ran out of memory)",
            )
        except CellTimeoutError:
            self.stop(
                cell,
                self.flooded
                or f"this cell did not finish within {self.timeout} s and could not be interrupted",
            )
        else:
            if self.flooded:
                self.stop(cell, self.flooded)
            elif any(output.get("ename") == "CellTimeoutError" for output in cell.outputs):
                self.stop(cell, f"this cell did not finish within {self.timeout} s")
        return cell, resources

    def process_message(self, msg: dict, cell, cell_index: int):
        """Each message of the running cell, counted as it arrives: past the bounds, the kernel is ended and the rest dropped."""
        if self.flooded:
            return None
        size = message_bytes(msg)
        self.cell_bytes += size
        self.notebook_bytes += size
        if self.cell_bytes > CELL_OUTPUT or self.notebook_bytes > NOTEBOOK_OUTPUT:
            most, whose = (
                (CELL_OUTPUT, "this cell")
                if self.cell_bytes > CELL_OUTPUT
                else (NOTEBOOK_OUTPUT, "the notebook's cells")
            )
            self.flooded = (
                f"{whose} sent more than {most >> 20} MiB of output, so the kernel was ended"
            )
            if self.manager is not None:
                self.manager.end()  # no more output: what it sent past the bound is never kept
            return None
        return super().process_message(msg, cell, cell_index)

    def stop(self, cell, why: str) -> None:
        """End the run at this cell, saying so in its output and in nbgrader's log."""
        self.stopped = why
        note = (
            f"Autograde stopped the notebook here: {why}. The cells below were not run. The graded cells "
            "grade exercises/ as you submitted it, before any cell ran, so their points do not depend on this.\n"
        )
        cell.outputs.append(NotebookNode(output_type="stream", name="stdout", text=note))
        self.log.warning("Stopped running the notebook at cell %s: %s", cell.get("id", "?"), why)


def message_bytes(msg: dict) -> int:
    """About how many bytes a kernel's message holds: its text, its keys and its binary buffers."""
    size, todo = sum(len(buffer) for buffer in msg.get("buffers") or ()), [msg.get("content")]
    while todo:
        value = todo.pop()
        if isinstance(value, dict):
            todo += [*value.keys(), *value.values()]
        elif isinstance(value, list):
            todo += value
        elif isinstance(value, (str, bytes)):
            size += len(value)
    return size


def course_root(preprocessor) -> list[str]:
    """The course folder (gradebook, submissions, source), which the kernel must not see; none outside nbgrader."""
    try:
        return [str(Path(course_directory(preprocessor).root).resolve())]
    except RuntimeError:
        return []


def become_subreaper() -> None:
    """Linux: orphans of the processes this one started become its children, so that sweep finds them."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        except (OSError, AttributeError):
            pass


def sweep(since: float) -> None:
    """Kill this process's descendants started since `since`, and reap the orphans it adopted; in nbgrader's command line only.

    A server has other children, which are its own to wait for.
    """
    if not command_line():
        return
    me = psutil.Process()
    for _ in range(5):
        left = []
        for child in me.children(recursive=True):
            try:
                if child.create_time() + 1 >= since:
                    left.append(child)
            except psutil.Error:
                pass
        if not left:
            break
        end_processes(left, 2.0)
    reap(me)


def reap(me: psutil.Process) -> None:
    """Wait for the children that have ended: orphans adopted as subreaper (a worker's inner bubblewrap) stay zombies otherwise."""
    for child in me.children():
        try:
            if child.status() == psutil.STATUS_ZOMBIE:
                os.waitpid(child.pid, os.WNOHANG)
        except (psutil.Error, ChildProcessError):
            pass


def tidy(folder: Path) -> None:
    """Remove from the autograded folder what must not reach the feedback: litter, links, fifos, sockets, devices."""
    for root, dirs, files in os.walk(folder):
        for name in list(dirs):
            path = os.path.join(root, name)
            if name in LITTER or os.path.islink(path):
                dirs.remove(name)
                _remove(path)
        for name in files:
            path = os.path.join(root, name)
            if os.path.islink(path) or not os.path.isfile(path):
                _remove(path)


def _remove(path: str) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    except OSError:
        pass
