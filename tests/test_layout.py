"""The house rules of docs/architecture.md, checked: imports only go down the stages, kernels are
pure, no public name shadows a submodule, and no module grows past the size a reader can hold."""

import ast
import pkgutil
from pathlib import Path

import ctxselect

PACKAGE = Path(ctxselect.__file__).resolve().parent
# the stages, top to bottom; a module may import from its own stage or any stage above it
STAGES = ["_kernel_cache", "_config", "_runtime", "errors", "model", "packing", "kernels", "text", "features", "quality",
          "selection", "evaluate", "integrations", "cli"]
MAX_LINES = 400


def _stage(module: str) -> int:
    """Stage index of a dotted module below ctxselect ("model.io" -> 4)."""
    return STAGES.index(module.split(".")[0])


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).with_suffix("")
        parts = [p for p in rel.parts if p != "__init__"]
        if parts and parts[0] != "__main__":
            yield ".".join(parts), path


def _imports(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ctxselect."):
            yield node.module[len("ctxselect."):]
        elif isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"{path}: relative import; the house uses absolute imports")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("ctxselect."):
                    yield alias.name[len("ctxselect."):]


def test_every_module_belongs_to_a_stage():
    for module, _path in _modules():
        assert module.split(".")[0] in STAGES, module


def test_imports_only_go_down():
    upward = []
    for module, path in _modules():
        for target in _imports(path):
            if _stage(target) > _stage(module):
                upward.append(f"{module} imports {target}")
    assert upward == []


def test_kernels_import_nothing_of_ctxselect_but_the_config():
    for module, path in _modules():
        if module.startswith("kernels"):
            assert set(_imports(path)) <= {"_config"}, module


def test_no_public_name_is_also_a_submodule():
    submodules = {m.name for m in pkgutil.iter_modules(ctxselect.__path__)}
    assert not submodules & set(ctxselect.__all__)
    for name in ctxselect.__all__:
        assert not hasattr(getattr(ctxselect, name), "__path__"), name  # a function stays a function


def test_no_module_outgrows_a_reader():
    long = {m: n for m, p in _modules() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}
