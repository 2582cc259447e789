"""The layers of bugsvc and the rules between them, read from every module's
imports (ast, so imports inside functions count too).

Bottom to top: neutral modules (the version, errors, dates); store/, the
ground (connections, transactions, schema, engines); call/, the call
kernel (the Context, parameter coercion, answer shapes, change notes, the
unit of work); the domain (accounts/, catalogue/, bugs/, notify/, forge/); services/,
the API methods; api/, the operations, the Runner and the docs; and the ways
in at the top (web/, cli/, serving/, importer/, the app, the Config and the
composition root).

A module imports modules of its own layer or of the layers below it, never
of one above. The three transports over HTTP (REST, RPC, the web pages) do
not import each other; what they share lives in a neutral module of web/.
Nothing below the ways in imports falcon, Jinja2 or waitress. No module
imports, through others, a module that imports it (an import loop). And
which database engine is in use is store/'s business: no module outside it
imports an engine's module or asks which engine it has; it asks the
engine's capabilities instead (Location.is_file, Database.can_backup ...).

Behaviour and its SQL live in the area packages, not in services/: a
services module (the API methods: params read through call/params.py, a
call into accounts/, catalogue/, bugs/ or notify/, the answer's shape)
names no connection, executes nothing and imports nothing from store/.
Everything in store/ is reached through a connection (SQL placeholders,
the audit log, the outbox, the caches), and shaping an answer needs none
of it (dates are bugsvc.dates', shapes call/fields.py's); so the rule has
no exception for shaping.
"""

import ast
import functools
from pathlib import Path

import pytest


# The checks share one parse of the package (cached below): on one
# pytest-xdist worker, it is parsed once.
pytestmark = pytest.mark.xdist_group("project.layers")

PACKAGE = Path(__file__).resolve().parents[2] / "bugsvc"

# Each top-level module or package of bugsvc, by layer, bottom to top.
LAYERS = (
    ("neutral", ("bugsvc", "bugsvc.errors", "bugsvc.dates")),
    ("store", ("bugsvc.store",)),
    ("call kernel", ("bugsvc.call",)),
    ("domain", ("bugsvc.accounts", "bugsvc.catalogue", "bugsvc.bugs", "bugsvc.notify",
                "bugsvc.forge")),
    ("services", ("bugsvc.services",)),
    ("api", ("bugsvc.api",)),
    ("ways in", ("bugsvc.web", "bugsvc.app", "bugsvc.serving", "bugsvc.cli", "bugsvc.importer",
                 "bugsvc.config", "bugsvc.compose")),
)
TRANSPORTS = ("bugsvc.web.rest", "bugsvc.web.rpc", "bugsvc.web.pages")
WEB_LIBRARIES = ("falcon", "jinja2", "waitress")
ENGINE_MODULES = ("bugsvc.store.sqlite", "bugsvc.store.postgres")
# What a services module may not name: a connection and its statements.
DATABASE_NAMES = ("conn", "execute", "executemany", "executescript")
# Services modules whose behaviour has not moved out yet, each with the
# reason; the check fails when one of them no longer needs its place here.
SERVICES_WITH_SQL = {}
ENGINE_NAMES = ("is_postgresql", "SqliteDatabase", "PostgresDatabase", "engine_name",
                "POSTGRESQL_SCHEMES")


def _name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.lru_cache(maxsize=1)
def _modules():
    return {_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


@functools.lru_cache(maxsize=None)
def _nodes(path):
    """Every node of the module at `path`, parsed once for all the checks."""
    return tuple(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


def _imports(module, path):
    """(line, imported module) of every import in `module`; `from X import Y`
    gives X.Y when X.Y is a module of bugsvc, else X."""
    known = _modules()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in _nodes(path):
        if isinstance(node, ast.Import):
            found.update((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            for alias in node.names:
                child = f"{target}.{alias.name}"
                found.add((node.lineno, child if child in known else target))
    return sorted(found)


def _within(module, prefix):
    return module == prefix or module.startswith(prefix + ".")


def _layer(module):
    """The index of `module`'s layer, or None for modules outside bugsvc."""
    best = None
    for index, (_, members) in enumerate(LAYERS):
        for member in members:
            if _within(module, member) and (best is None or len(member) > len(best[1])):
                best = (index, member)
    return None if best is None else best[0]


@functools.lru_cache(maxsize=1)
def _arrows():
    return [(module, line, imported) for module, path in _modules().items()
            for line, imported in _imports(module, path)]


def upward_arrows():
    """'module:line -> imported' for every import of a layer above the importer's."""
    found = []
    for module, line, imported in _arrows():
        if not _within(imported, "bugsvc"):
            continue
        own, other = _layer(module), _layer(imported)
        if other > own:
            found.append(f"{module}:{line} ({LAYERS[own][0]}) -> {imported} ({LAYERS[other][0]})")
    return found


def test_every_module_has_a_layer():
    assert [module for module in _modules() if _layer(module) is None] == []


def test_no_module_imports_a_layer_above_its_own():
    assert upward_arrows() == []


def test_no_transport_imports_another():
    found = []
    for module, line, imported in _arrows():
        mine = [t for t in TRANSPORTS if _within(module, t)]
        theirs = [t for t in TRANSPORTS if _within(imported, t)]
        if mine and theirs and mine != theirs:
            found.append(f"{module}:{line} -> {imported}")
    assert found == []


def test_nothing_below_the_ways_in_imports_a_web_library():
    top = len(LAYERS) - 1
    found = [f"{module}:{line} -> {imported}" for module, line, imported in _arrows()
             if _layer(module) < top and imported.split(".")[0] in WEB_LIBRARIES]
    assert found == []


def _engine_questions(module, path):
    """Where `module` (outside store/) names an engine: imports of an
    engine's module, engine names, `dialect.name`, and comparisons with a
    PostgreSQL URL's scheme."""
    found = [f"{module}:{line} imports {imported}" for line, imported in _imports(module, path)
             if any(_within(imported, engine) for engine in ENGINE_MODULES)]
    for node in _nodes(path):
        name = node.id if isinstance(node, ast.Name) else \
            node.attr if isinstance(node, ast.Attribute) else None
        if name in ENGINE_NAMES:
            found.append(f"{module}:{node.lineno} names {name}")
        if isinstance(node, ast.Attribute) and node.attr == "name" and \
                isinstance(node.value, ast.Attribute) and node.value.attr == "dialect":
            found.append(f"{module}:{node.lineno} asks dialect.name")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                node.value.lower().startswith(("postgresql:", "postgres:")):
            found.append(f"{module}:{node.lineno} tests a URL scheme")
    return found


def test_no_module_outside_the_store_asks_which_engine_it_has():
    found = []
    for module, path in _modules().items():
        if not _within(module, "bugsvc.store"):
            found.extend(_engine_questions(module, path))
    assert found == []


def _module_graph():
    """{module: the modules of bugsvc it imports}."""
    modules = _modules()
    graph = {module: set() for module in modules}
    for module, _, imported in _arrows():
        while imported and imported not in modules:
            imported = imported.rpartition(".")[0]
        if imported and imported != module:
            graph[module].add(imported)
    return graph


def import_loops(graph):
    """The groups of modules that import each other, through others or not
    (strongly connected components of more than one module), each sorted."""
    index, low, stack, on_stack, loops = {}, {}, [], set(), []

    def visit(start):
        # Tarjan's algorithm, without recursion.
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    loops.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return loops


def test_no_import_loop():
    assert import_loops(_module_graph()) == []


def test_the_loop_check_finds_a_loop_through_others():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_loops(graph) == [["a", "b", "c"]]


@pytest.mark.parametrize("source, expected", [
    ("from ..api.params import Params\n", "bugsvc.api.params"),
    ("from ..api import runner\n", "bugsvc.api.runner"),
    ("def f():\n    from ..store import db\n", "bugsvc.store.db"),
    ("import bugsvc.errors\n", "bugsvc.errors"),
])
def test_the_check_reads_each_form_of_import(tmp_path, source, expected):
    path = tmp_path / "probe.py"
    path.write_text(source, encoding="utf-8")
    assert [imported for _, imported in _imports("bugsvc.bugs.probe", path)] == [expected]
    assert _layer(expected) is not None


@pytest.mark.parametrize("source", [
    "from ..store.postgres.database import PostgresDatabase\n",
    "from ..store.location import Location\nLocation.of(x).engine_name\n",
    "ok = conn.dialect.name == 'sqlite'\n",
    "ok = url.startswith('postgresql://')\n",
])
def test_the_check_finds_each_engine_question(tmp_path, source):
    path = tmp_path / "probe.py"
    path.write_text(source, encoding="utf-8")
    assert _engine_questions("bugsvc.bugs.probe", path)


def _database_uses(module, path):
    """Where `module` touches the database: imports of store/, and the
    names of a connection or its statements (`conn`, `.execute` ...)."""
    found = [f"{module}:{line} imports {imported}" for line, imported in _imports(module, path)
             if _within(imported, "bugsvc.store")]
    for node in _nodes(path):
        name = node.id if isinstance(node, ast.Name) else \
            node.attr if isinstance(node, ast.Attribute) else \
            node.arg if isinstance(node, ast.arg) else None
        if name in DATABASE_NAMES:
            found.append(f"{module}:{node.lineno} names {name}")
    return found


def test_no_services_module_touches_the_database():
    found = []
    for module, path in _modules().items():
        if _within(module, "bugsvc.services") and module not in SERVICES_WITH_SQL:
            found.extend(_database_uses(module, path))
    assert found == []


def test_each_services_module_allowed_sql_still_needs_it():
    modules = _modules()
    done = [module for module in SERVICES_WITH_SQL
            if module not in modules or not _database_uses(module, modules[module])]
    assert done == [], "no longer touches the database: take it off SERVICES_WITH_SQL"


@pytest.mark.parametrize("source", [
    "from ..store import audit\n",
    "from ..store.db import placeholders\n",
    "rows = ctx.conn.execute('SELECT 1')\n",
    "def f(conn):\n    return 1\n",
    "cur.executemany('INSERT', rows)\n",
])
def test_the_services_check_finds_each_use_of_the_database(tmp_path, source):
    path = tmp_path / "probe.py"
    path.write_text(source, encoding="utf-8")
    assert _database_uses("bugsvc.services.probe", path)


def test_the_services_check_passes_a_thin_service(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text("from ..call.params import Params\nfrom ..catalogue import keyword\n\n"
                    "def get(ctx, params):\n"
                    "    return {'keywords': keyword.find(ctx, Params(params).int_list('ids'),"
                    " [])}\n", encoding="utf-8")
    assert _database_uses("bugsvc.services.probe", path) == []
