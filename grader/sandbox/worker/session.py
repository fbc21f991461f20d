"""In the worker: the student's folder as a package, and stand-ins for the functions graded by the reference."""

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from pathlib import Path

from grader.sandbox.worker.codec import PACKAGE
from grader.sandbox.worker.imports import Refused


class BlockSolutions(importlib.abc.MetaPathFinder):
    """Refuses any import of the `solutions` package."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "solutions":
            raise Refused(f"importing {name} is not allowed", name=name)
        return None


class Fallback(importlib.abc.Loader):
    """Runs a student module; if it fails, the stand-ins of its graded-by-reference functions take its place."""

    def __init__(self, loader, stand_ins):
        self.loader, self.stand_ins = loader, stand_ins

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        try:
            self.loader.exec_module(module)
        except (
            BaseException
        ):  # the student's module cannot be used; the stand-ins serve its functions
            module.__dict__.update(self.stand_ins)


class StandIns(importlib.abc.Loader):
    """A module made of the stand-ins alone: the student's file is never run, so nothing it does at import reaches here."""

    def __init__(self, stand_ins):
        self.stand_ins = stand_ins

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__dict__.update(self.stand_ins)
        module.__getattr__ = only_stand_ins(
            module.__name__.rpartition(".")[2], sorted(self.stand_ins)
        )


def only_stand_ins(module: str, served: list[str]):
    """A module's __getattr__ that says, for any other name imported from it, that the reference stands in there."""

    def missing(name: str):
        if name.startswith("__"):  # the import system's own probes get the usual answer
            raise AttributeError(name)
        raise ImportError(
            f"{name} cannot be imported from your {module}.py here: the reference stands in for your {module}.py, "
            f"so only {', '.join(served)} can be imported from it. Keep {name} in the module that uses it."
        )

    return missing


class FallbackFinder(importlib.abc.MetaPathFinder):
    """Finds the student modules whose functions are served by stand-ins.

    A module the grader never asked for (an earlier exercise, graded elsewhere) is the stand-ins alone,
    its file never run: a hang, a crash or an input() at its import costs only its own exercise. One the
    grader asked for runs, and the stand-ins replace its served functions, or all of it when it fails.
    """

    def __init__(self, fallbacks):
        self.fallbacks = fallbacks  # {qualified module name: {function name: stand-in}}
        # the qualified names of the modules the grader asked to import
        self.asked: set[str] = set()

    def find_spec(self, name, path=None, target=None):
        if name not in self.fallbacks:
            return None
        if name not in self.asked:
            return importlib.machinery.ModuleSpec(name, StandIns(self.fallbacks[name]))
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        spec.loader = Fallback(spec.loader, self.fallbacks[name])
        return spec


class Session:
    """The student's package, and the stand-ins that replace the functions graded by the reference.

    A stand-in holds no reference code: it asks the grader, which runs the reference in its own
    process and sends back the value (see grader.sandbox.worker.channel.Channel.ask).
    """

    def __init__(self, folder, reference_for, ask):
        self.folder = Path(folder)
        self.stand_ins = {name: stand_in(name, ask) for name in reference_for}
        self.originals: dict[str, list] = {}
        fallbacks: dict[str, dict] = {}
        for name, function in self.stand_ins.items():
            module, _, short = name.partition(".")
            fallbacks.setdefault(f"{PACKAGE}.{module}", {})[short] = function
        self.finder = FallbackFinder(fallbacks)
        sys.meta_path.insert(0, self.finder)
        sys.meta_path.insert(0, BlockSolutions())
        load_package(PACKAGE, self.folder)

    def import_module(self, module):
        """Import a student module, then put the stand-ins in place."""
        name = f"{PACKAGE}.{module}"
        if name in sys.modules:
            return sys.modules[name]
        self.finder.asked.add(name)
        loaded = importlib.import_module(name)
        self.substitute()
        return loaded

    def substitute(self):
        """Replace each graded-by-reference function wherever the student package binds it."""
        modules = [m for name, m in list(sys.modules.items()) if name.startswith(PACKAGE + ".")]
        for qualified, new in self.stand_ins.items():
            module, _, function = qualified.partition(".")
            owner = sys.modules.get(f"{PACKAGE}.{module}")
            if owner is None:
                continue
            olds = self.originals.setdefault(qualified, [])
            current = owner.__dict__.get(function)
            if (
                current is not None
                and current is not new
                and not any(current is old for old in olds)
            ):
                olds.append(current)
            owner.__dict__[function] = new
            for other in modules:
                for key, value in list(vars(other).items()):
                    if any(value is old for old in olds):
                        vars(other)[key] = new


def stand_in(qualified: str, ask):
    """A function named like the reference one that asks the grader for its value."""
    function = qualified.partition(".")[2]

    def asking(*args):
        return ask(qualified, args)

    asking.__name__ = asking.__qualname__ = function
    asking.__doc__ = (
        f"Stands for the reference {qualified}: the grader computes it, outside this process."
    )
    return asking


def load_package(name, folder):
    """A folder as a package under a private name, so relative imports work; no __init__.py is run."""
    package = types.ModuleType(name)
    package.__path__ = [str(folder)]
    package.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    package.__spec__.submodule_search_locations = [str(folder)]
    sys.modules[name] = package
    return package
