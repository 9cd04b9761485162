"""What vLLM's full check accepts: the cells no configuration can get past narrowed.

vLLM asks a backend ``validate_configuration``: each column's own method on its
own input (``supports_head_size(head_size)``, ...: what the cells show) and
then ``supports_combination`` on the whole configuration. A value the column's
method admits may still be refused by the combination in every configuration
(FlashMLA's dense kernel only on Hopper), and the cell would promise what vLLM
refuses. So, for Head Sizes, Block Sizes and Compute Cap., a value is kept
where ``supports_combination`` returns no reason for at least one
configuration whose other inputs the class's own answers admit.

Cost is kept to what a check can change (see :func:`narrow`): a class whose
``supports_combination`` is the interface's own (it returns None) is not asked;
otherwise one run at a seed configuration records the parameters the method
read (and whether the GPU was read) and only those columns are asked, each
value one run that usually returns None at once. Only a value refused there is
explored over the other inputs the method read, path by path (as
:mod:`.priority_paths` explores the priority function), with the interpreter's
memo shared with the cells.
"""

from __future__ import annotations

from typing import Any

from sphinxext_attn.pyeval import (
    Interpreter,
    PyClass,
    Raised,
    Unknown,
)
from sphinxext_attn.runtime.class_answers import ClassAnswers
from sphinxext_attn.runtime.full_check import COMBINATION, FullCheck, Refusal

#: the columns narrowed, by the parameter of the check that carries them
COLUMNS = {
    "head_size": "Head Sizes",
    "block_size": "Block Sizes",
    "device_capability": "Compute Cap.",
}


def narrow(interp: Interpreter, cls: PyClass, facts: ClassAnswers) -> None:
    """Narrow ``facts``' Head Sizes, Block Sizes and Compute Cap. to what the full check
    accepts (``facts.accepts``: column -> the values kept; a note per column)."""
    check = FullCheck(interp, cls, facts)
    try:
        if not check.resolve() or not check.build_domains():
            return
        _narrow(check, facts)
    except (Unknown, Raised) as exc:
        why = f"{exc.kind}: {exc.message}" if isinstance(exc, Raised) else str(exc)
        facts.accepts_unknown = dict.fromkeys(
            COLUMNS.values(), f"the full check not evaluated: {why}"
        )


def _narrow(check: FullCheck, facts: ClassAnswers) -> None:
    seed_read: list[str] = []
    seed_ok = True
    for cap in check.domains["device_capability"]:  # a GPU on which some configuration passes
        value, order, _ = check.run({**check.seed, "device_capability": cap})
        if value is None:
            seed_read = order
        elif check.accepts({"device_capability": cap}):
            seed_read, seed_ok = list(COLUMNS), False  # passed elsewhere: ask every column
        elif check.read_gpu:
            continue
        else:  # no path read the GPU: refused on every one alike
            _refused_all(check, facts)
            return
        check.seed["device_capability"] = cap
        break
    else:
        _refused_all(check, facts)
        return
    for param, column in COLUMNS.items():
        if param not in seed_read:
            continue  # the check's answer at the seed holds for every value
        values = [
            v
            for v in check.domains[param]
            if v is not None and (v != check.seed[param] or not seed_ok)
        ]
        refused = [v for v in values if not check.accepts({param: v})]
        if not refused:
            continue
        if not _finite(facts.cells[column]):
            listed = ", ".join(map(_label, refused))
            facts.accepts_unknown[column] = f"the full check refuses {listed} of a set of rules"
            continue
        kept = _without(facts.cells[column], refused)
        facts.accepts[column] = kept
        why = check.refusal({param: refused[0]})
        facts.notes[column] = _note(column, refused, why, check)


def _refused_all(check: FullCheck, facts: ClassAnswers) -> None:
    """Refused in every configuration tried (a package not installed, another
    platform's backend): no value is singled out, the cells stay as the methods say."""
    why = check.refusal({})
    tail = f" (assuming {', '.join(why.assumed)})" if why.assumed else ""
    text = f"the full check refuses every configuration tried: {why.reason}{tail}"
    facts.accepts_unknown = dict.fromkeys(COLUMNS.values(), text)


def _finite(cell: Any) -> bool:
    if cell == "any":
        return False
    return all(
        not isinstance(v, dict) and not (isinstance(v, str) and v.startswith("%")) for v in cell
    )


def _without(cell: list[Any], refused: list[Any]) -> list[Any]:
    gone = {_label(v) for v in refused}
    return [v for v in cell if _label(v) not in gone]


def _label(value: Any) -> str:
    if isinstance(value, tuple):
        return f"{value[0]}.{value[1]}"
    return str(value)


def _note(column: str, refused: list[Any], why: Refusal, check: FullCheck) -> str:
    where = f" ({why.where})" if why.where else ""
    assumed = list(why.assumed)
    if why.engine_config:
        assumed.append("vLLM's default engine config")
    tail = f" (assuming {', '.join(assumed)})" if assumed else ""
    values = ", ".join(_label(v) for v in refused)
    return (
        f"the class's own check also accepts {values}, which vLLM's full check "
        f"(validate_configuration) refuses in every configuration: {COMBINATION}() "
        f'answers "{why.reason}"{where}{tail}'
    )
