"""What an answer may depend on outside the tree, named, with defaults, settable.

Three kinds of input, each settable on the command line (``--env``,
``--option``, ``--assume``), in ``conf.py`` and on every directive:

- environment variables, read as the tree's own ``vllm/envs.py`` reads them
  (``os.getenv`` and ``os.environ`` see exactly these; vLLM's defaults apply
  to the rest);
- engine options: ``VllmConfig`` fields by dotted path
  (``attention_config.flash_attn_version``), over the config's declared
  defaults;
- facts about the machine (:data:`FACTS`), each named after the code that asks
  it: an installed package (``installed.aiter``), a tool on PATH
  (``which.nvcc``), the network, or the answer of one function of the tree
  whose own answer rests on something no static reading can settle
  (``has_flashinfer_sm90_nope_mla``).

The defaults are the reference machine of the recorded truth: a full CUDA build
with the release's pinned dependencies, no ``VLLM_*`` variable, no network, no
``flashinfer-cubin``, nvcc and ninja on PATH, vLLM's default ``VllmConfig()``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sphinxext_attn.model.plugin import Plugins, brought_platforms

PLATFORMS = ("cuda", "rocm", "xpu", "cpu")
#: vLLM's built-in platforms whose class lives in another package (``tpu_inference``)
OUT_OF_TREE_PLATFORMS = ("tpu",)


def known_platforms(plugins: Plugins = ()) -> tuple[str, ...]:
    """Every platform a name may be given for: vLLM's, and those ``plugins`` bring
    (``npu``, ``hpu``)."""
    return (*PLATFORMS, *OUT_OF_TREE_PLATFORMS, *brought_platforms(plugins))


#: a platform's name (vLLM's ``tpu``, a plugin's ``npu``), checked against the
#: plugins of a run or build once they are read
PLATFORM_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,30}\Z")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
OPTION_NAME = re.compile(r"[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)*\Z")
FACT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_-]*)*\Z")
TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")


@dataclass(frozen=True)
class Fact:
    """A kind of machine fact: how its names look, its default, what it means."""

    pattern: str
    default: str
    meaning: str


#: The kinds of fact the machine answers (``NAME`` is the variable part).
FACTS: tuple[Fact, ...] = (
    Fact(
        "installed.PACKAGE",
        "true for a package the release's backend code imports, false for one it only "
        "probes for (find_spec), such as flashinfer_cubin or aiter",
        "importlib.util.find_spec(PACKAGE) finds it",
    ),
    Fact(
        "installed.vllm.MODULE",
        "true: a full build holds the modules its wheel adds to the source tree",
        "an import of that module (vllm.vllm_flash_attn.cute) succeeds",
    ),
    Fact("network", "false", "a network request (requests, urllib, socket) succeeds"),
    Fact("which.TOOL", "true", "shutil.which(TOOL) finds the tool (nvcc, ninja) on PATH"),
    Fact(
        "FUNCTION",
        "none: the answer is evaluated, and is conditional where it cannot be",
        "the answer of the tree's function FUNCTION (e.g. has_flashinfer_sm90_nope_mla=true), "
        "for a function whose answer rests on an installed package's internals",
    ),
)


class EnvironmentError_(ValueError):  # noqa: N801  (not the builtin EnvironmentError)
    """A setting that is not of the accepted shape; the message names it."""


@dataclass(frozen=True)
class Environment:
    """Everything an evaluation assumes about the world outside the tree."""

    env: Mapping[str, str] = field(default_factory=dict)
    options: Mapping[str, str] = field(default_factory=dict)
    assume: Mapping[str, str] = field(default_factory=dict)
    platform: str = "cuda"
    arch: str = ""

    def key(self) -> str:
        """A stable text for cache keys: empty for the reference environment."""
        parts = [
            *(f"env:{k}={v}" for k, v in sorted(self.env.items())),
            *(f"option:{k}={v}" for k, v in sorted(self.options.items())),
            *(f"assume:{k}={v}" for k, v in sorted(self.assume.items())),
        ]
        if self.platform != "cuda":
            parts.append(f"platform:{self.platform}")
        if self.arch:
            parts.append(f"arch:{self.arch}")
        return ";".join(parts)

    def is_reference(self) -> bool:
        return not self.key()

    def as_data(self) -> dict[str, object]:
        """Plain data (JSON), for cache keys that must say what they assume."""
        return {
            "env": dict(self.env),
            "options": dict(self.options),
            "assume": dict(self.assume),
            "platform": self.platform,
            "arch": self.arch,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Environment:
        return cls(
            dict(data.get("env", {})),
            dict(data.get("options", {})),
            dict(data.get("assume", {})),
            str(data.get("platform", "cuda")),
            str(data.get("arch", "")),
        )

    def merged(self, other: Environment) -> Environment:
        """``other``'s settings over this one's (a directive over conf.py); its
        platform is the one it says (build it from this one's when it says none)."""
        return Environment(
            {**self.env, **other.env},
            {**self.options, **other.options},
            {**self.assume, **other.assume},
            other.platform,
            other.arch or self.arch,
        )

    def settings(self) -> list[str]:
        """What was set, as the reader would write it (``NAME=VALUE``), for "assuming: ..."."""
        return [
            *(f"{k}={v}" for k, v in sorted(self.env.items())),
            *(f"{k}={v}" for k, v in sorted(self.options.items())),
            *(f"{k}={v}" for k, v in sorted(self.assume.items())),
        ]


def labelled(what: str) -> str:
    """``--env:`` for a flag, ``:env:`` as it is for a directive option (one colon)."""
    return what if what.endswith(":") else f"{what}:"


def parse_assignments(text: str | Iterable[str], what: str) -> dict[str, str]:
    """``NAME=VALUE, ...`` (one text, or one item per assignment) as a dict.

    ``what`` names the setting in the error (``--env``, ``:assume:``).
    """
    items = [text] if isinstance(text, str) else list(text)
    found: dict[str, str] = {}
    for item in items:
        for part in item.split(",") if isinstance(text, str) else [item]:
            part = part.strip()
            if not part:
                continue
            name, eq, value = part.partition("=")
            if not eq:
                raise EnvironmentError_(f"{labelled(what)} {part!r} is not NAME=VALUE")
            found[name.strip()] = value.strip()
    return found


def check_names(values: Mapping[str, object], pattern: re.Pattern[str], what: str) -> None:
    for name in values:
        if not pattern.match(name):
            raise EnvironmentError_(f"{labelled(what)} {name!r} is not a valid name")


#: the name pattern of each kind of setting
PATTERNS = {"env": ENV_NAME, "options": OPTION_NAME, "assume": FACT_NAME}


def check_setting(kind: str, values: Mapping[str, object], what: str) -> None:
    """Names of one kind (``env``, ``options``, ``assume``) checked as
    :func:`environment_from` checks them; :class:`EnvironmentError_` names ``what``."""
    check_names(values, PATTERNS[kind], what)
    if kind == "assume":
        check_fact_values({k: as_text(v) for k, v in values.items()}, what)


def environment_from(
    env: Mapping[str, object] | None = None,
    options: Mapping[str, object] | None = None,
    assume: Mapping[str, object] | None = None,
    platform: str = "cuda",
    arch: str = "",
    where: tuple[str, str, str] = ("--env", "--option", "--assume"),
    plugins: Plugins = (),
) -> Environment:
    """A checked :class:`Environment`; values are kept as text (as the environment has
    them), the platform one of vLLM's or of ``plugins``. Raises
    :class:`EnvironmentError_` naming the setting and what it accepts."""
    if platform not in known_platforms(plugins):
        raise EnvironmentError_(
            f"platform: {platform!r} is not one of {', '.join(known_platforms(plugins))}"
        )
    result = []
    for values, pattern, what in zip(
        (env, options, assume), (ENV_NAME, OPTION_NAME, FACT_NAME), where, strict=True
    ):
        values = dict(values or {})
        check_names(values, pattern, what)
        result.append({k: as_text(v) for k, v in values.items()})
    check_fact_values(result[2], where[2])
    return Environment(result[0], result[1], result[2], platform, arch.strip().lower())


#: the facts whose value is a truth value (the rest are a function's answer)
TRUTH_FACTS = re.compile(r"(installed|which)\.|network\Z")


def check_fact_values(assume: Mapping[str, str], what: str) -> None:
    """A package, tool or network fact is true or false; anything else would be read
    as neither and silently left to the default."""
    for name, value in assume.items():
        if TRUTH_FACTS.match(name) and truth_of(value) is None:
            words = "/".join(TRUE_WORDS[:2] + FALSE_WORDS[:2])
            raise EnvironmentError_(
                f"{what} {name}={value}: {value!r} is not a value of {name}; it accepts "
                f"true or false ({words}, yes/no, on/off)"
            )


def as_text(value: object) -> str:
    """A conf.py value as the text an environment variable would hold."""
    if value is True:
        return "1"
    if value is False:
        return "0"
    if value is None:
        return ""
    return str(value)


def truth_of(text: str) -> bool | None:
    """A fact's value as a truth value (None: not a truth word)."""
    word = text.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    return None


def literal_of(text: str) -> object:
    """An option's or function fact's value: int, float, bool, None or the text itself."""
    word = text.strip()
    lowered = word.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    for kind in (int, float):
        try:
            return kind(word)
        except ValueError:
            pass
    return word


REFERENCE = Environment()
#: The GPU a ROCm machine has when no arch is named (MI300X/MI325X).
DEFAULT_ROCM_ARCH = "gfx942"


def gpu_words(environment: Environment) -> str:
    """How a decision's title names the GPU on a platform other than CUDA."""
    if environment.platform == "rocm":
        return f"ROCm {environment.arch or DEFAULT_ROCM_ARCH}"
    return "" if environment.platform == "cuda" else environment.platform.upper()


#: The engine option a case's ``model_attn_type`` sets (the model config's attn_type).
MODEL_ATTN_TYPE = "model_config.attn_type"
#: the model attention types the selection code tells apart: none (no engine config,
#: as the docs build) and an encoder-decoder model (ROCm keeps ROCM_ATTN out for it)
MODEL_ATTN_TYPES: tuple[str | None, ...] = (None, "encoder_decoder")


def case_environment(
    case: object, base: Environment, index: int, plugins: Plugins = ()
) -> Environment:
    """The environment of one ``select --cases`` case (``env``, ``assume``, ``platform``,
    ``arch``, ``aiter_installed``, ``model_attn_type``) over ``base`` (the command
    line's; its ``plugins`` bring the platforms a case may name besides vLLM's)."""
    if not isinstance(case, dict):
        return base
    where = f"case {index}"
    env = case.get("env") or {}
    assume = dict(case.get("assume") or {})
    if not isinstance(env, dict) or not isinstance(assume, dict):
        raise EnvironmentError_(f"{where}: 'env' and 'assume' must be objects")
    if case.get("aiter_installed") is not None:
        assume["installed.aiter"] = case["aiter_installed"]
    options = {}
    if case.get("model_attn_type") is not None:  # the model config's attn_type
        options[MODEL_ATTN_TYPE] = case["model_attn_type"]
    own = environment_from(
        env,
        options,
        assume,
        str(case.get("platform") or base.platform),
        str(case.get("arch") or base.arch),
        (f"{where}: env", f"{where}: option", f"{where}: assume"),
        plugins,
    )
    return base.merged(own)
