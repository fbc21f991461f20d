"""In the worker: the student's folder as a package, the reference beside it, and the substitutions between them."""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from pathlib import Path

from grader.sandbox.codec import PACKAGE

REFERENCE = "_reference"  # the private name of the reference solutions in the worker


class Refused(ImportError):
    """Raised when student code imports the reference solutions."""


class BlockSolutions(importlib.abc.MetaPathFinder):
    """Refuses any import of the `solutions` package."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "solutions":
            raise Refused(f"importing {name} is not allowed")
        return None


class Fallback(importlib.abc.Loader):
    """Runs a student module; if it fails, the module becomes a copy of the reference one."""

    def __init__(self, loader, reference):
        self.loader, self.reference = loader, reference

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        try:
            self.loader.exec_module(module)
        except BaseException:  # the student's module cannot be used; the reference stands in
            module.__dict__.update({k: v for k, v in vars(self.reference).items() if not k.startswith("__")})


class FallbackFinder(importlib.abc.MetaPathFinder):
    """Wraps the loader of the student modules whose functions are graded by the reference."""

    def __init__(self, fallbacks):
        self.fallbacks = fallbacks  # {qualified module name: reference module}

    def find_spec(self, name, path=None, target=None):
        if name not in self.fallbacks:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        spec.loader = Fallback(spec.loader, self.fallbacks[name])
        return spec


class Session:
    """The student's package, the reference package, and the substitutions between them."""

    def __init__(self, folder, reference, reference_for):
        self.folder = Path(folder)
        self.reference = load_package(REFERENCE, Path(reference))
        self.reference_for = [name.split(".", 1) for name in reference_for]
        self.originals: dict[tuple[str, str], list] = {}
        fallbacks = {f"{PACKAGE}.{module}": self.reference_module(module) for module, _ in self.reference_for}
        sys.meta_path.insert(0, FallbackFinder(fallbacks))
        sys.meta_path.insert(0, BlockSolutions())
        load_package(PACKAGE, self.folder, run_init=False)

    def reference_module(self, module):
        """The reference version of a module."""
        return importlib.import_module(f"{REFERENCE}.{module}")

    def import_module(self, module):
        """Import a student module, then put the reference functions in place."""
        name = f"{PACKAGE}.{module}"
        if name in sys.modules:
            return sys.modules[name]
        loaded = importlib.import_module(name)
        self.substitute()
        return loaded

    def substitute(self):
        """Replace each reference_for function wherever the student package binds it."""
        modules = [m for name, m in list(sys.modules.items()) if name.startswith(PACKAGE + ".")]
        for module, function in self.reference_for:
            owner = sys.modules.get(f"{PACKAGE}.{module}")
            if owner is None:
                continue
            new = getattr(self.reference_module(module), function)
            olds = self.originals.setdefault((module, function), [])
            current = owner.__dict__.get(function)
            if current is not None and current is not new and not any(current is old for old in olds):
                olds.append(current)
            owner.__dict__[function] = new
            for other in modules:
                for key, value in list(vars(other).items()):
                    if any(value is old for old in olds):
                        vars(other)[key] = new


def load_package(name, folder, run_init=True):
    """Import a folder as a package under a private name, so relative imports work."""
    init = folder / "__init__.py"
    if run_init and init.is_file():
        spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(folder)])
        package = importlib.util.module_from_spec(spec)
        sys.modules[name] = package
        spec.loader.exec_module(package)
        return package
    package = types.ModuleType(name)
    package.__path__ = [str(folder)]
    package.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    package.__spec__.submodule_search_locations = [str(folder)]
    sys.modules[name] = package
    return package



def refused(error) -> bool:
    """Whether an exception comes from importing the reference solutions."""
    seen = 0
    while error is not None and seen < 20:
        if isinstance(error, Refused):
            return True
        error, seen = error.__cause__ or error.__context__, seen + 1
    return False

