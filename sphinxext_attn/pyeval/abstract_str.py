"""An abstract string argument: one of a few strings, a run per path.

``supports_kv_cache_dtype(d)`` is asked of every KV cache dtype the release
names, one question each; most classes only test ``d`` (``d is None``,
``d in cls.supported_kv_cache_dtypes``, ``d == "fp8"``, ``d.startswith("fp8")``).
An :class:`AbstractStr` stands for the dtypes not answered yet: each test
splits them into those that make it true and those that make it false, and
the run follows the side holding the first of them (in the release's order),
so a run takes exactly the path that dtype's own question takes, and answers
for every dtype that takes it too (see :func:`explore_strings`).

Anything else done with the value (hashing it, printing it, a method but
``startswith``/``endswith``, passing it to a builtin or outside the tree)
raises :class:`Concretize`: the run is dropped and that first dtype is asked
on its own, as it would have been. :class:`Concretize` is no :class:`Unknown`
(the evaluator catches those in places and goes on); it leaves every question
and check it passes through. Runs begin with the first dtype not answered
yet, so the machine facts are first read in the order the questions one by
one would read them.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sphinxext_attn.pyeval.values import Budget, EnumMember, External, Instance, Unknown, Value


class Concretize(BaseException):  # noqa: N818 (not an error: a signal to the explorer)
    """The run did something with the abstract string that is only done on a real
    one: drop the run and ask its first string alone."""


class StrExplorer:
    """The strings (by index into :attr:`values`) still possible on this run."""

    def __init__(self, values: list[str], current: list[int]) -> None:
        self.values = values
        #: the indexes still possible, in order (the first is the one followed)
        self.current = current
        self.live = False

    @contextmanager
    def running(self) -> Iterator[None]:
        self.live = True
        try:
            yield
        finally:
            self.live = False

    def decide(self, test: Callable[[str], bool]) -> bool:
        """Whether ``test`` holds on this path: the strings left narrowed to the side
        of the first one."""
        values = self.values
        inside = [i for i in self.current if test(values[i])]
        if len(inside) == len(self.current):
            return True
        if not inside:
            return False
        choice = inside[0] == self.current[0]
        if choice:
            self.current = inside
        else:
            self.current = [i for i in self.current if not test(values[i])]
        return choice

    def give_up(self) -> Concretize:
        """What an operation the domain does not keep raises (see the module)."""
        if not self.live:  # a value kept after its question: nothing to drop
            raise Unknown("an abstract string used after its question is not evaluated")
        return Concretize()


class AbstractStr:
    """One of the strings its explorer still holds."""

    __slots__ = ("explorer",)

    def __init__(self, explorer: StrExplorer) -> None:
        self.explorer = explorer

    def _concrete(self, *_: object) -> bool:
        raise self.explorer.give_up()

    __hash__ = _concrete
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _concrete
    __str__ = __repr__ = __format__ = __bool__ = __len__ = _concrete  # type: ignore[assignment]
    __iter__ = __contains__ = __getitem__ = _concrete


def is_abstract(value: Value) -> bool:
    return type(value) is AbstractStr


def concretize(*values: Value) -> None:
    """Give up (see the module) if any of ``values`` is abstract."""
    for value in values:
        if type(value) is AbstractStr:
            raise value.explorer.give_up()


def equal(left: Value, right: Value) -> bool:
    """``left == right`` with one side (at least) abstract."""
    if left is right:
        return True
    abstract, other = (left, right) if is_abstract(left) else (right, left)
    explorer: StrExplorer = abstract.explorer
    if type(other) is str:
        return explorer.decide(lambda s: s == other)
    if other is None or type(other) in (int, float, bool):
        return False  # a str never equals them
    raise explorer.give_up()


def same(left: Value, right: Value) -> bool:
    """``left is right`` with one side (at least) abstract: a string is never a
    value of another type; whether two strings are one object is not kept."""
    if left is right:
        return True
    abstract, other = (left, right) if is_abstract(left) else (right, left)
    if type(other) is str or is_abstract(other):
        raise abstract.explorer.give_up()
    return False


def contains(container: Value, item: AbstractStr, budget: Budget, where: tuple[str, int]) -> bool:
    """``item in container`` for a string or a container of strings and None,
    charged as the real string's test is (see ``ops.contains``)."""
    if type(container) is str:
        return item.explorer.decide(lambda s: s in container)
    if type(container) in (list, tuple, set, frozenset, dict):
        if not all(type(x) is str or x is None for x in container):
            raise item.explorer.give_up()
        budget.spend(1 + len(container), where)
        return item.explorer.decide(lambda s: s in container)
    raise item.explorer.give_up()


def truth(value: AbstractStr) -> bool:
    return value.explorer.decide(bool)


#: str methods kept: a prefix or suffix test, by a str or a tuple of them
TESTS = frozenset({"startswith", "endswith"})
#: the name of such a method of an abstract string (as a builtin), less the method's
TESTED_BY = "abstract str."
#: builtins that take an abstract string as an argument (the rest give up first)
KEPT_BY = frozenset({"isinstance", "dict.get", *(TESTED_BY + name for name in TESTS)})


def test_method(
    value: AbstractStr, name: str, args: list[Value], kwargs: dict[str, Value]
) -> bool:
    """``value.startswith(prefix)`` / ``value.endswith(suffix)``."""
    if name not in TESTS or kwargs or len(args) != 1:
        raise value.explorer.give_up()
    arg = args[0]
    if not (type(arg) is str or (type(arg) is tuple and all(type(a) is str for a in arg))):
        raise value.explorer.give_up()
    if name == "startswith":
        return value.explorer.decide(lambda s: s.startswith(arg))
    return value.explorer.decide(lambda s: s.endswith(arg))


def compare(
    op: ast.cmpop, left: Value, right: Value, where: tuple[str, int], budget: Budget
) -> bool:
    """A comparison with an abstract string on either side."""
    if isinstance(op, ast.Is | ast.IsNot):
        return same(left, right) == isinstance(op, ast.Is)
    if isinstance(op, ast.In | ast.NotIn) and is_abstract(left):
        return contains(right, left, budget, where) == isinstance(op, ast.In)
    objects = Instance | EnumMember | External  # (their own == and the world's)
    plain_sides = not isinstance(left, objects) and not isinstance(right, objects)
    if isinstance(op, ast.Eq | ast.NotEq) and plain_sides:
        return equal(left, right) == isinstance(op, ast.Eq)
    raise (left if is_abstract(left) else right).explorer.give_up()


def explore_strings(
    values: list[str],
    run: Callable[[AbstractStr], bool],
    alone: Callable[[int], bool],
    stopped: Callable[[], bool],
) -> list[int]:
    """The indexes of ``values`` for which ``run`` answers true: one run per path
    (``run`` raising :class:`Concretize`: ``alone(index)`` answers for the first
    string of the run, as its own question would), until ``stopped()``."""
    accepted: list[int] = []
    remaining = list(range(len(values)))
    while remaining and not stopped():
        explorer = StrExplorer(values, remaining)
        try:
            with explorer.running():
                ok = run(AbstractStr(explorer))
            covered = explorer.current
        except Concretize:
            covered = remaining[:1]
            ok = alone(covered[0])
        if ok:
            accepted += covered
        done = set(covered)
        remaining = [i for i in remaining if i not in done]
    return sorted(accepted)


def dict_get(table: dict[Value, Value], key: AbstractStr, default: Value) -> Value:
    """``table.get(key, default)`` for a table keyed by strings: the path of the
    first string left takes its entry (or the default, with every string the
    table lacks)."""
    explorer = key.explorer
    if not table:
        return default
    if not all(type(k) is str for k in table):
        raise explorer.give_up()
    values = explorer.values
    first = values[explorer.current[0]]
    if first in table:
        explorer.decide(lambda s: s == first)
        return table[first]
    explorer.decide(lambda s: s not in table)
    return default
