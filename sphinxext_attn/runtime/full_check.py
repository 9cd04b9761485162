"""One backend's ``supports_combination`` asked over the configurations its own
answers admit (see :mod:`.accepts`, which narrows the cells with it): each run
records the parameters the method read, a refusal where its reason is written and
what it assumed."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from sphinxext_attn.knowledge.engine_config import CONFIG_GETTERS
from sphinxext_attn.knowledge.machine import Machine, capability_class
from sphinxext_attn.model.records import Location
from sphinxext_attn.pyeval import (
    CAPABILITY,
    NODE,
    STEPS_PER_CELL,
    Bound,
    External,
    Interpreter,
    PyClass,
    PyFunction,
    Raised,
    Unknown,
    class_mro,
)
from sphinxext_attn.runtime.class_answers import ClassAnswers
from sphinxext_attn.runtime.questions import attention_types
from sphinxext_attn.vocab.names import DTYPES

#: the check every column's value must get past, besides the column's own method
COMBINATION = "supports_combination"
#: configurations tried for one refused value before it is left as it is (unknown)
MAX_RUNS = 200

#: flag parameters of the check: the column whose answer admits them, and whether the
#: answer pins the flag (``use_mla != cls.is_mla()`` refuses the other value) or only
#: allows it (``has_sink and not cls.supports_sink()``)
FLAG_PARAMS = {
    "use_mla": ("MLA", True),
    "use_sparse": ("Sparse", True),
    "has_sink": ("Sink", False),
    "use_mm_prefix": ("MM Prefix", False),
}


@dataclass
class Refusal:
    """Why a value is refused in every configuration tried (for the note)."""

    reason: str
    where: Location | None
    assumed: list[str] = field(default_factory=list)
    engine_config: bool = False


def _plain_none(func: PyFunction) -> bool:
    """A body that can only return None (docstring, ``pass``, ``return None``)."""
    node = func.node
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    for stmt in node.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if isinstance(stmt, ast.Pass):
            continue
        if isinstance(stmt, ast.Return) and (
            stmt.value is None
            or (isinstance(stmt.value, ast.Constant) and stmt.value.value is None)
        ):
            continue
        return False
    return True


class FullCheck:
    """``supports_combination`` of one class over configurations its answers admit."""

    def __init__(self, interp: Interpreter, cls: PyClass, facts: ClassAnswers) -> None:
        self.interp = interp
        self.cls = cls
        self.facts = facts
        self.runs = 0
        self._caps: dict[tuple[int, int], Any] = {}
        self.method: Any = None
        self.params: list[str] = []
        self.domains: dict[str, list[Any]] = {}
        self.seed: dict[str, Any] = {}
        #: whether some run read the GPU (else every GPU takes the same paths)
        self.read_gpu = False

    # -- the method and whether it can narrow anything --------------------------------
    def resolve(self) -> bool:
        """Whether the class has a ``supports_combination`` of its own to ask (the
        interface's returns None: nothing to narrow)."""
        interp = self.interp
        try:
            with interp.question(steps=None):
                method = interp.getattr(self.cls, COMBINATION, NODE, self.cls.path)
        except Raised:  # the release's interface asks no combination
            return False
        if not isinstance(method, Bound) or not isinstance(method.func, PyFunction):
            return False
        mro = [c for c in class_mro(self.cls, interp) if isinstance(c, PyClass)]
        root = mro[-1]
        own = next((s for s in root.node.body if getattr(s, "name", "") == COMBINATION), None)
        if not isinstance(own, ast.FunctionDef):
            return False  # the release's interface asks no combination
        if method.func.owner is root and _plain_none(method.func):
            return False
        self.method = method
        self.params = [a.arg for a in own.args.args][1:]
        return True

    # -- the configurations the class's own answers admit ------------------------------
    def build_domains(self) -> bool:
        """Each parameter's values: those the class's cells list (a flag: the class's
        answer first, then the other); False where a cell is not evaluated."""
        cells = self.facts.cells
        wanted = ("Compute Cap.", "Head Sizes", "Block Sizes", "Dtypes", "KV Dtypes")
        if any(cells.get(c) is None for c in (*wanted, "Attention Types")):
            return False
        caps, heads, blocks, dtypes, kv = (cells[c] for c in wanted)
        kinds = cells["Attention Types"]
        if not caps:
            return False
        labels = dict(DTYPES)
        dtype_values = [External(labels[d]) for d in _preferred(dtypes, "bf16") if d in labels]
        types = dict(attention_types(self.interp, self.cls))
        kind_values = [types[k] for k in _preferred(kinds, "DECODER") if k in types]
        if not dtype_values or not kind_values or not heads:
            return False
        answered = {"MLA": self.facts.mla, **cells}
        self.domains = {
            "head_size": _head_values(heads),
            "block_size": [None, *_block_values(blocks)],
            "device_capability": list(caps),
            "dtype": dtype_values,
            "kv_cache_dtype": _preferred(list(kv), "auto") or [None],
            "attn_type": kind_values[:1],
        }
        for name in self.params:
            if name in self.domains:
                continue
            column, pinned = FLAG_PARAMS.get(name, ("", False))
            if column and answered.get(column) is None:
                return False
            said = bool(answered.get(column))
            # pinned: vLLM refuses the other value (``use_mla != cls.is_mla()``);
            # else the flag may be set only where the class says so
            self.domains[name] = (
                [said] if pinned else [False, True] if said or not column else [False]
            )
        if not self.domains["head_size"]:
            return False
        self.seed = {name: values[0] for name, values in self.domains.items()}
        return True

    def _capability(self, cap: tuple[int, int]) -> Any:
        found = self._caps.get(cap)
        if found is None:
            cls = capability_class(self.interp)
            found = self._caps[cap] = self.interp.call(cls, list(cap), {}, NODE, "")
        return found

    # -- one run ------------------------------------------------------------------------
    def run(self, config: dict[str, Any], record: bool = False) -> tuple[Any, list[str], Any]:
        """The method's answer for ``config``, the parameters it read (in order; the
        GPU read counts as ``device_capability``) and the question (with
        ``record``: its returns and calls kept, for the note)."""
        self.runs += 1
        if self.runs > MAX_RUNS:
            raise Unknown("too many configurations to try", self.cls.path, self.cls.node.lineno)
        interp = self.interp
        cap = config["device_capability"]
        args = [
            self._capability(config[n]) if n == "device_capability" else config[n]
            for n in self.params
        ]
        reads: dict[str, None] = {}
        func = self.method.func
        called_before = interp.called
        with interp.question(
            capability=cap,
            steps=STEPS_PER_CELL,
            where=(func.path, func.node.lineno),
            fresh_memos=record,
        ) as q:
            if record:
                q.record_returns()
                interp.called = {}
            try:
                value = interp.run_function(func, [self.cls, *args], {}, reads=reads)
            finally:
                called, interp.called = interp.called, called_before
        order = [n for n in reads if n in self.domains]
        if "args" in reads or "kwargs" in reads:  # ``*args``: every parameter passed on
            order = list(self.params)
        if q.read & CAPABILITY and "device_capability" not in order:
            order.append("device_capability")
        self.read_gpu = self.read_gpu or "device_capability" in order
        return value, order, (q, called)

    def accepts(self, fixed: dict[str, Any]) -> bool:
        """Whether some configuration with ``fixed`` gets no reason from the method:
        the seed first, then, where it reads a parameter, that parameter's other
        values (each path of the method once)."""

        def visit(pick: dict[str, Any]) -> bool:
            config = {**self.seed, **pick}
            value, order, _ = self.run(config)
            if value is None:
                return True
            prefix = dict(pick)
            for name in order:
                here = config[name]
                if name not in pick:
                    for other in self.domains[name]:
                        if other is not here and other != here and visit({**prefix, name: other}):
                            return True
                prefix[name] = here
            return False

        return visit(dict(fixed))

    def refusal(self, fixed: dict[str, Any]) -> Refusal:
        """The method's reason at the seed with ``fixed``, where it is stated, and what
        the answer assumed (machine facts; the engine config at vLLM's default)."""
        value, _, (q, called) = self.run({**self.seed, **fixed}, record=True)
        reason = str(value)
        where = _stated_at(q.returns, reason)
        engine = any(getattr(f, "name", "") in CONFIG_GETTERS for f in called.values())
        assumed = q.assumptions
        if engine:
            named = self._engine_fields(fixed, reason)
            if named is not None and named != assumed:
                assumed, engine = named, False
        return Refusal(reason, where, assumed, engine)

    def _engine_fields(self, fixed: dict[str, Any], reason: str) -> list[str] | None:
        """The assumptions of the same refusal with vLLM's default engine config
        current: they name the config fields the check reads (``attention_config.
        flash_attn_version=default (None)``); None where the answer then differs."""
        world = self.interp.world
        if not isinstance(world, Machine):
            return None
        with world.config_current():
            value, _, (q, _) = self.run({**self.seed, **fixed}, record=True)
        return q.assumptions if str(value) == reason else None


def _preferred(values: list[Any], first: Any) -> list[Any]:
    return sorted(values, key=lambda v: v != first)


def _head_values(items: Any) -> list[int]:
    """Head sizes to try: the listed ones, 128 first where it is one; a rule's
    smallest size (any: 128)."""
    if items == "any":
        return [128]
    out: list[int] = []
    for item in items:
        if isinstance(item, int):
            out.append(item)
        elif isinstance(item, dict):
            low, step = item.get("min") or 1, item.get("multiple_of") or 1
            out.append(low + (-low) % step)
    return _preferred(list(dict.fromkeys(out)), 128)


def _block_values(labels: list[str]) -> list[int]:
    """Block sizes to try: the listed ones, ``%N`` as N."""
    return [int(label.lstrip("%")) for label in labels]


def _stated_at(returns: list[Any], reason: str) -> Location | None:
    """Where the reason is written: the ``return`` of the longest text that is part of
    it, one written as a literal (``return False, "..."`` counts) before one that
    builds it (``f"{name}: {reason}"``), the first of equals."""
    best: tuple[tuple[bool, int], Location] | None = None
    for ret in returns:
        texts = [ret.value] if isinstance(ret.value, str) else []
        if isinstance(ret.value, tuple):
            texts = [v for v in ret.value if isinstance(v, str)]
        literal = _literal(ret.expr)
        for text in texts:
            rank = (literal, len(text))
            if text and text in reason and (best is None or rank > best[0]):
                best = (rank, Location(ret.path, ret.line))
    return best[1] if best else None


def _literal(expr: ast.expr | None) -> bool:
    """A string written as it is (alone or in a returned tuple)."""
    items = expr.elts if isinstance(expr, ast.Tuple) else [expr]
    return any(isinstance(i, ast.Constant) and isinstance(i.value, str) for i in items)
