"""The package's layout keeps the rules of issue 34: no module over 800 lines, and no
import cycle among the package's modules (imports at module level; an import inside a
function is deferred, and the package uses a few to load optional or heavy modules)."""

import ast
from pathlib import Path

import dptrees

PACKAGE = Path(dptrees.__file__).parent
MAX_LINES = 800


def _modules():
    """``{dotted name: path}`` of every Python and Cython source of the package."""
    found = {}
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix not in (".py", ".pyx") or "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(name, path, modules):
    """The package modules that ``name`` imports at module level (``import a.b``,
    ``from a import b`` where ``b`` may be a module, relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.stem == "__init__" else name.rpartition(".")[0]
    targets = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets.add(base)
            targets.update(f"{base}.{alias.name}" for alias in node.names)
    return {t for t in targets if t in modules and t != name}


def test_no_module_is_over_800_lines():
    long = {name: n for name, path in _modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long


def _find_cycle(graph):
    """One cycle of ``graph`` (``{node: set of nodes}``) as a list of nodes, or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = "done"
        return None

    for name in sorted(graph):
        if name not in state and (cycle := visit(name)):
            return cycle
    return None


def test_no_import_cycle():
    modules = {name: path for name, path in _modules().items() if path.suffix == ".py"}
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    # a package's __init__ imports its own modules: that edge is not a cycle
    for name in graph:
        graph[name] = {t for t in graph[name] if not t.startswith(name + ".")}
    assert sum(len(targets) for targets in graph.values()) > 100  # the graph was read
    assert _find_cycle(graph) is None


def test_the_cycle_finder_finds_a_cycle(tmp_path):
    a, b, c = (tmp_path / f"{n}.py" for n in "abc")
    a.write_text("from pkg import b\n")
    b.write_text("import pkg.c\n")
    c.write_text("from pkg.a import something\n")
    modules = {"pkg.a": a, "pkg.b": b, "pkg.c": c}
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert graph == {"pkg.a": {"pkg.b"}, "pkg.b": {"pkg.c"}, "pkg.c": {"pkg.a"}}
    assert _find_cycle(graph) == ["pkg.a", "pkg.b", "pkg.c", "pkg.a"]
    assert _find_cycle({"x": {"y"}, "y": set()}) is None
