"""The package's modules import each other without a cycle.

Every import Python executes counts, wherever it is written: at the top
or inside a function (a late import, which hides a cycle from Python
without removing it). An import under ``if TYPE_CHECKING:`` is never
executed: it names a type for annotations (as _display names the
Explanation it draws) and does not count."""

import ast
import os
import unittest
from typing import Dict, List, Optional, Set

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(os.path.dirname(HERE), "tempora")


def package_imports(package_dir: str, package: str = "tempora") -> Dict[str, Set[str]]:
    """For each module of the package (its name without the package), the
    package's modules it imports."""
    modules = {f[:-3] for f in os.listdir(package_dir) if f.endswith(".py")}
    graph: Dict[str, Set[str]] = {}
    for name in sorted(modules):
        with open(os.path.join(package_dir, name + ".py"), encoding="utf-8") as f:
            tree = ast.parse(f.read(), name + ".py")
        deps: Set[str] = set()
        for node in _executed(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level == 1 and node.module is None:  # from . import _a, _b
                    deps.update(a.name for a in node.names if a.name in modules)
                elif node.level == 1 and node.module is not None:  # from ._a import x
                    deps.add(node.module.split(".")[0])
                elif node.level == 0 and node.module is not None and node.module.split(".")[0] == package:
                    parts = node.module.split(".")
                    if len(parts) > 1:
                        deps.add(parts[1])  # from tempora._a import x
                    else:
                        deps.update(a.name for a in node.names if a.name in modules)  # from tempora import _a
            elif isinstance(node, ast.Import):
                for a in node.names:
                    parts = a.name.split(".")
                    if parts[0] == package and len(parts) > 1:
                        deps.add(parts[1])
        deps.discard(name)
        graph[name] = {d for d in deps if d in modules}
    return graph


def _executed(tree: ast.AST) -> List[ast.AST]:
    """The nodes of tree outside ``if TYPE_CHECKING:`` blocks."""
    out: List[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                todo.extend(child.orelse)
                continue
            todo.append(child)
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def find_cycle(graph: Dict[str, Set[str]]) -> Optional[List[str]]:
    """A cycle of graph as the list of its modules, the first repeated at
    the end, or None."""
    state: Dict[str, int] = {}  # 1: on the path, 2: done
    path: List[str] = []

    def visit(n: str) -> Optional[List[str]]:
        state[n] = 1
        path.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return path[path.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c is not None:
                    return c
        path.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            c = visit(n)
            if c is not None:
                return c
    return None


class ImportCycleTest(unittest.TestCase):
    def test_no_cycle(self):
        graph = package_imports(PACKAGE)
        self.assertGreater(len(graph), 10)  # the package's modules were found
        self.assertIn("_input", graph["_explain"])  # and their imports
        cycle = find_cycle(graph)
        self.assertIsNone(cycle, "import cycle: %s" % " -> ".join(cycle or []))

    def test_finds_cycles(self):
        """The check fails on a cycle of executed imports, however they are
        written (relative, absolute, late)."""
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            sources = {
                "__init__.py": "from ._a import f\n",
                "_a.py": "from . import _b\n",
                "_b.py": "def g():\n    from tempora._c import h\n",
                "_c.py": "import tempora._a\n",
                "_d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._e import T\n",
                "_e.py": "from ._d import U\n",
            }
            for name, text in sources.items():
                with open(os.path.join(d, name), "w", encoding="utf-8") as f:
                    f.write(text)
            graph = package_imports(d)
            self.assertEqual(find_cycle(graph), ["_a", "_b", "_c", "_a"])
            self.assertEqual(graph["_d"], set())  # a type-only import does not count
            with open(os.path.join(d, "_c.py"), "w", encoding="utf-8") as f:
                f.write("import os\n")
            self.assertIsNone(find_cycle(package_imports(d)))


if __name__ == "__main__":
    unittest.main()
