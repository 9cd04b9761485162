"""Which columns beyond the seed's a release's page shows, and the DCP cell rule.

vLLM's page grew columns as its generator grew them (each column's ``since``
in :mod:`sphinxext_attn.model.columns`), while the backend interface had each
concept a release earlier. So
the column set is read from the generator the tree ships (parsed, never
run); a tree without one (an installed distribution) shows a column when
some backend of the release claims the capability.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from sphinxext_attn.model.columns import COLUMN, EXTRA_COLUMNS, OPTIONAL_COLUMNS
from sphinxext_attn.model.records import BackendFeatures, Location
from sphinxext_attn.source.astwalk import walk_kept
from sphinxext_attn.source.classes import ClassRef, base_name
from sphinxext_attn.source.lookup import find_class, imports_of
from sphinxext_attn.source.tree import SourceTree
from sphinxext_attn.vocab.paths import GENERATORS

#: The impl attribute vLLM's generator reads for the DCP cell.
DCP_ATTRIBUTE = COLUMN["DCP"].impl_attribute
MAX_HOPS = 12


def generator_columns(module: ast.Module) -> set[str]:
    """Column headers a generator writes: ``("DCP", lambda b: ...)`` specs, literal
    ``| Backend | ... |`` headers and ``| **DCP** |`` legend rows."""
    found: set[str] = set()
    for node in walk_kept(module):
        if isinstance(node, ast.Tuple) and len(node.elts) == 2:
            head, spec = node.elts
            if isinstance(head, ast.Constant) and isinstance(spec, ast.Lambda):
                found.add(str(head.value))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "|" in node.value:
            for line in node.value.splitlines():
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if line.lstrip().startswith("| Backend |"):
                    found.update(cells)
                elif len(cells) >= 2 and cells[0].startswith("**") and cells[0].endswith("**"):
                    found.add(cells[0].strip("*"))
    return found


def read_generator(tree: SourceTree) -> ast.Module | None:
    """The release's own page generator, parsed (None when the tree ships none)."""
    rel = tree.first_present(GENERATORS)
    return tree.parse(rel) if rel is not None else None


def kv_excludes(generator: ast.Module | None) -> dict[str, frozenset[str]] | None:
    """KV dtypes the generator leaves out per backend (``BACKEND_KV_DTYPE_EXCLUDES``,
    from 0.18: an alias shown once); None without a generator."""
    if generator is None:
        return None
    for node in generator.body:
        if isinstance(node, ast.AnnAssign):
            target: ast.expr = node.target
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        else:
            continue
        value = node.value
        if not (
            isinstance(target, ast.Name)
            and target.id == "BACKEND_KV_DTYPE_EXCLUDES"
            and isinstance(value, ast.Dict)
        ):
            continue
        out: dict[str, frozenset[str]] = {}
        for key, items in zip(value.keys, value.values, strict=True):
            if isinstance(key, ast.Constant) and isinstance(items, ast.Set | ast.List | ast.Tuple):
                names = [e.value for e in items.elts if isinstance(e, ast.Constant)]
                out[str(key.value)] = frozenset(str(n) for n in names)
        return out
    return {}


def page_columns(generator: ast.Module | None, rows: list[BackendFeatures]) -> tuple[str, ...]:
    """The optional columns the release's page shows, in page order."""
    if generator is not None:
        declared = generator_columns(generator)
        return tuple(c for c in OPTIONAL_COLUMNS if c in declared)
    return tuple(c for c, fact in OPTIONAL_COLUMNS.items() if any(getattr(r, fact) for r in rows))


# -- the DCP cell -----------------------------------------------------------------


def _bool_var(node: ast.ClassDef, name: str) -> ast.Constant | None:
    """``name = True`` / ``name: bool = False`` in the class body (literal bools only)."""
    for item in node.body:
        targets = (
            [item.target]
            if isinstance(item, ast.AnnAssign)
            else item.targets
            if isinstance(item, ast.Assign)
            else []
        )
        value = getattr(item, "value", None)
        if (
            any(isinstance(t, ast.Name) and t.id == name for t in targets)
            and isinstance(value, ast.Constant)
            and isinstance(value.value, bool)
        ):
            return value
    return None


def _imported_file(tree: SourceTree, path: str, name: str) -> str | None:
    """The module file a ``from X import name`` of ``path`` names (a ``.py`` file,
    as the generator looks; packages are not followed)."""
    for dotted, _ in imports_of(tree, path, name):
        rel = f"{dotted.replace('.', '/')}.py"
        if not tree.is_outside(rel) and tree.exists(rel):
            return rel
    return None


def _parent_name(node: ast.ClassDef) -> str | None:
    """The first base as a plain name (``Base`` or ``Base[T]``; ``mod.Base`` is not read)."""
    base = node.bases[0] if node.bases else None
    if isinstance(base, ast.Subscript):
        base = base.value
    return base.id if isinstance(base, ast.Name) else None


def _impl_name(backend: ClassRef) -> str | None:
    """The first ``return Name`` of the backend's own ``get_impl_cls``."""
    for item in backend.node.body:
        if isinstance(item, ast.FunctionDef) and item.name == "get_impl_cls":
            for node in ast.walk(item):
                if isinstance(node, ast.Return) and isinstance(node.value, ast.Name):
                    return node.value.id
            return None
    return None


def dcp(tree: SourceTree, backend: ClassRef) -> tuple[bool, Location | None]:
    """The page's DCP cell: the impl class (defined in the backend's file) says
    ``can_return_lse_for_decode = True``, itself or along its first bases."""
    name = _impl_name(backend)
    path = backend.path
    seen: set[str] = set()
    while name and name not in seen and len(seen) < MAX_HOPS:
        seen.add(name)
        node = find_class(tree, path, name, needing=DCP_ATTRIBUTE)
        if node is None:
            return False, None
        value = _bool_var(node, DCP_ATTRIBUTE)
        if value is not None:
            return bool(value.value), Location(path, value.lineno)
        parent = _parent_name(node)
        if parent is None:
            return False, None
        if find_class(tree, path, parent, needing=DCP_ATTRIBUTE) is None:
            other = _imported_file(tree, path, parent)
            if other is None:
                return False, None
            path = other
        name = parent
    return False, None


# -- capability columns a ``:columns:`` option may ask for -------------------------


def _root_class(
    tree: SourceTree, ref: ClassRef, memo: dict[tuple[str, str], ClassRef]
) -> ClassRef:
    """The end of a backend's first-base chain: the release's backend interface
    (``memo``: roots already found from a base, as most backends share theirs)."""
    seen = {(ref.path, ref.name)}
    chain: list[tuple[str, str]] = []
    while ref.node.bases and len(seen) < MAX_HOPS:
        key = (ref.path, base_name(ref.node.bases[0]) or "")
        if key in memo:
            ref = memo[key]
            break
        chain.append(key)
        parent = _base_class(tree, *key)
        if parent is None or (parent.path, parent.name) in seen:
            break
        seen.add((parent.path, parent.name))
        ref = parent
    if ref.node.body and isinstance(ref.node.body[0], ast.Pass):  # a header: read it all
        whole = find_class(tree, ref.path, ref.name)
        ref = ClassRef(ref.path, whole) if whole is not None else ref
    memo.update(dict.fromkeys(chain, ref))
    return ref


def _base_class(tree: SourceTree, path: str, name: str, depth: int = 0) -> ClassRef | None:
    """Class ``name`` as module ``path`` sees it: defined there or imported (re-exports
    through packages followed)."""
    if not name or depth > MAX_HOPS:
        return None
    node = find_class(tree, path, name, header=True)  # bases only
    if node is not None:
        return ClassRef(path, node)
    for dotted, original in imports_of(tree, path, name):
        target = tree.module_file(dotted)
        if target is not None:
            return _base_class(tree, target, original, depth + 1)
    return None


def interface_columns(tree: SourceTree, refs: Iterable[ClassRef]) -> tuple[str, ...]:
    """The extra capability columns whose question (a ``supports_*(cls)`` method)
    the backend interface of the release declares, in :data:`EXTRA_COLUMNS` order."""
    declared: set[str] = set()
    roots: set[tuple[str, str]] = set()
    memo: dict[tuple[str, str], ClassRef] = {}
    for ref in refs:
        root = _root_class(tree, ref, memo)
        if (root.path, root.name) in roots:
            continue
        roots.add((root.path, root.name))
        for item in root.node.body:
            if isinstance(item, ast.FunctionDef) and len(item.args.args) == 1:
                declared.add(item.name)
    return tuple(c for c, method in EXTRA_COLUMNS.items() if method in declared)
