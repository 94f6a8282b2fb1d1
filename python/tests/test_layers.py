"""The package's structure (recur/__init__.py draws it): every module in one
layer, each importing only modules of the layers below it, PyTorch imported
at module level only by the modules built on it; no function over 80 lines
and no file of python/ over 700."""

import ast
import pathlib
import subprocess
import sys

import pytest

import recur

PYTHON = pathlib.Path(__file__).resolve().parents[1]  # python/: the sources, not the build tree's copies
PACKAGE = PYTHON / "recur"
LAYER = {name: depth for depth, names in enumerate(recur._LAYERS) for name in names}
# The modules that import PyTorch when imported.
TORCH = {"torch", "_autograd"}


def _modules():
    return sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")


def _imports(name):
    """(module of recur imported, at module level) for each import in the
    module's source; PyTorch is recur's "torch" only where imported
    relatively (from . import torch)."""
    tree = ast.parse((PACKAGE / f"{name}.py").read_text())
    top = set(map(id, tree.body))
    out = []
    for node in ast.walk(tree):
        level = id(node) in top
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module is None:
                out += [(a.name, level) for a in node.names]
            else:
                out.append((node.module.split(".")[0], level))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("recur"):
            parts = node.module.split(".")
            out += [(parts[1], level)] if len(parts) > 1 else [(a.name, level) for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "recur" and len(parts) > 1:
                    out.append((parts[1], level))
                elif parts[0] == "torch" and level and name not in TORCH:
                    out.append(("PyTorch", level))
    return out


def test_every_module_has_a_layer():
    assert sorted(n for n in LAYER if n != "_recur") == _modules()
    assert recur._LAYERS[-1] == ("_recur",)


@pytest.mark.parametrize("name", _modules())
def test_imports_go_down(name):
    for imported, top_level in _imports(name):
        assert imported != "PyTorch", f"{name} imports torch at module level"
        assert imported in LAYER, f"{name} imports recur.{imported}, which has no layer"
        assert LAYER[imported] > LAYER[name], f"{name} (layer {LAYER[name]}) imports {imported} (layer {LAYER[imported]})"
        if imported in TORCH and name not in TORCH:
            assert not top_level, f"{name} imports recur.{imported} (PyTorch) at module level"


def test_importing_recur_imports_no_pytorch():
    code = "import sys, recur, recur.signal, recur.linalg, recur.dpcm; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_function_and_file_sizes():
    long = []
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > 80:
                    long.append(f"{path.name}: {node.name} has {lines} lines")
    for path in sorted(p for p in PYTHON.rglob("*") if p.is_file() and p.suffix in (".py", ".pyi", ".cpp", ".hpp")):
        lines = len(path.read_text().splitlines())
        if lines > 700:
            long.append(f"{path.relative_to(PYTHON)} has {lines} lines")
    assert not long, long
