"""Every ``attention_backends_*`` setting is checked at ``config-inited``.

A wrong type or shape is one error at ``conf.py`` naming the setting, the
value and what it accepts: never an "Extension error", never a traceback. The
setting then falls back to its default, and ``-W`` fails the build.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from attn_sphinx_util import MINI_TREE, build, page_tables, sphinx_project, warnings
from sphinx.cmd.build import build_main

from sphinxext_attn.sphinx import config

BAD = [
    ("attention_backends_root", "42", "a path (str or os.PathLike)"),
    ("attention_backends_root", "['../vllm']", "a path (str or os.PathLike)"),
    ("attention_backends_source_url", "5", "{path}, {line} and {version}"),
    ("attention_backends_source_url", "'https://x/{file}#L{line}'", "{path}, {line}"),
    ("attention_backends_source_url", "'https://x/{0}'", "{path}, {line}"),
    ("attention_backends_source_url", "'https://x/{line[0]}'", "{path}, {line}"),
    ("attention_backends_source_url", "'https://x/{path.x}'", "{path}, {line}"),
    ("attention_backends_trees", "'x'", "a dict mapping names (str) to tree paths"),
    ("attention_backends_trees", "{'old': 3}", "a dict mapping names (str) to tree paths"),
    ("attention_backends_trees", "{1: 'x'}", "a dict mapping names (str) to tree paths"),
    ("attention_backends_trees", "{'old': ''}", "a dict mapping names (str) to tree paths"),
    ("attention_backends_profile", "'page'", "one of 'runtime', 'vllm-page'"),
    ("attention_backends_profile", "None", "one of 'runtime', 'vllm-page'"),
    ("attention_backends_strict", "'yes'", "True or False"),
    ("attention_backends_strict", "1", "True or False"),
    ("attention_backends_env", "['VLLM_X=1']", "a dict mapping names (str) to values"),
    ("attention_backends_env", "{'1X': '1'}", "'1X' is not a valid name"),
    ("attention_backends_options", "{'a.b': [2]}", "a dict mapping names (str) to values"),
    ("attention_backends_options", "{'Attention Config': 2}", "is not a valid name"),
    ("attention_backends_assume", "'network'", "a dict mapping names (str) to values"),
    ("attention_backends_platform", "'TPU v5e'", "one of 'cuda', 'rocm', 'xpu', 'cpu', 'tpu'"),
    ("attention_backends_plugins", "'../tpu'", "a list of folders (str or os.PathLike)"),
    ("attention_backends_plugins", "[3]", "a list of folders (str or os.PathLike)"),
]


def _project(tmp_path: Path, settings: str) -> Path:
    conf = (
        f"attention_backends_root = {str(MINI_TREE)!r}\n"
        # the mini tree has no backend interface to evaluate: pin the page reading
        + ('attention_backends_profile = "vllm-page"\n' if "profile" not in settings else "")
        + settings
        + "\n"
    )
    return sphinx_project(
        tmp_path, {"index": "Index\n=====\n\n.. attention-backends-standard::\n"}, conf
    )


def _sphinx_build(src: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = build_main(["-q", "-W", "-b", "html", str(src), str(out)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_every_setting_is_checked():
    assert set(config.SETTINGS) == {
        "attention_backends_root",
        "attention_backends_source_url",
        "attention_backends_trees",
        "attention_backends_profile",
        "attention_backends_strict",
        "attention_backends_env",
        "attention_backends_options",
        "attention_backends_assume",
        "attention_backends_platform",
        "attention_backends_plugins",
    }
    assert {name for name, _, _ in BAD} == set(config.SETTINGS)


def _no_traceback(text: str) -> None:
    assert "Extension error" not in text
    assert "Traceback" not in text
    assert "sphinx-err-" not in text  # no traceback file


@pytest.mark.parametrize(("name", "value", "accepts"), BAD)
def test_bad_value_is_one_clear_error(tmp_path, capsys, name, value, accepts):
    src = _project(tmp_path, f"{name} = {value}")
    code = build_main(["-q", "-b", "html", str(src), str(tmp_path / "out")])
    text = capsys.readouterr().err
    assert f"{src / 'conf.py'}: ERROR: {name} = {value} is not valid" in text, text
    assert accepts in text, text
    _no_traceback(text)
    assert text.count("ERROR") + text.count("WARNING") == 1, text  # one message, no follow-ups
    assert (tmp_path / "out" / "index.html").is_file()  # the build went on, with the default
    assert code in (0, 1)


@pytest.mark.parametrize(("name", "value", "accepts"), BAD[::3])
def test_bad_value_fails_a_w_build(tmp_path, capsys, name, value, accepts):
    src = _project(tmp_path, f"{name} = {value}")
    code, text = _sphinx_build(src, tmp_path / "out", capsys)
    assert code != 0
    assert f"{name} = {value} is not valid" in text and accepts in text, text
    assert str(src / "conf.py") in text
    _no_traceback(text)


def test_several_bad_values_each_named(tmp_path, capsys):
    settings = "attention_backends_strict = 'no'\nattention_backends_profile = 'x'"
    build_main(["-q", "-b", "html", str(_project(tmp_path, settings)), str(tmp_path / "out")])
    text = capsys.readouterr().err
    assert "using the default, False" in text
    assert "attention_backends_strict = 'no'" in text
    assert "attention_backends_profile = 'x'" in text


GOOD = [
    "attention_backends_root = None",
    "import pathlib; attention_backends_root = pathlib.Path(" + repr(str(MINI_TREE)) + ")",
    "attention_backends_source_url = 'https://x/{version}/{path}#L{line}'",
    "attention_backends_source_url = None",
    "attention_backends_trees = {'mini': " + repr(str(MINI_TREE)) + "}",
    "attention_backends_profile = 'vllm-page'",
    "attention_backends_profile = 'runtime'",
    "attention_backends_strict = True",
    "attention_backends_strict = False",
]


@pytest.mark.parametrize("settings", GOOD)
def test_good_values_build_cleanly(tmp_path, capsys, settings):
    if "attention_backends_root = None" in settings:
        settings += "\n"  # the conf.py's own root line comes first; None then wins
    code, text = _sphinx_build(_project(tmp_path, settings), tmp_path / "out", capsys)
    if settings.startswith("attention_backends_root = None"):
        # a good value: never refused; with no tree (unless vllm is installed),
        # the one "how to set it" warning
        assert "using the default" not in text and "ERROR" not in text, text
        assert "Traceback" not in text, text
        assert code == 0 or text.count("set attention_backends_root in conf.py") == 1, text
        return
    assert code == 0, text
    assert "ERROR" not in text and "WARNING" not in text, text


def test_profile_and_strict_helpers(make_app, tmp_path):
    src = _project(tmp_path, "attention_backends_profile = 'runtime'")
    app = build(make_app, src, confoverrides={"attention_backends_profile": "runtime"})
    assert config.profile(app) == "runtime" and config.profile(app.env) == "runtime"
    assert config.strict(app) is False
    other = tmp_path / "other"
    other.mkdir()
    src2 = _project(
        other,
        "attention_backends_profile = 'vllm-page'\nattention_backends_strict = True",
    )
    app = build(make_app, src2)
    assert config.profile(app) == "vllm-page" and config.profile(app.env) == "vllm-page"
    assert config.strict(app.env) is True
    assert warnings(app) == ""
    assert page_tables(app, "index")


def test_description_only_where_sphinx_takes_it():
    """Sphinx before 7.4 has no ``description=``: registration must not pass it there."""
    seen: list[dict[str, object]] = []

    class OldApp:
        def add_config_value(self, name, default, rebuild, types=()):  # Sphinx 7.2's signature
            seen.append({"name": name, "types": types})

        def connect(self, event, handler):
            seen.append({"event": event})

    config.register(OldApp())  # type: ignore[arg-type]
    assert {"event": "config-inited"} in seen
    assert {s["name"] for s in seen if "name" in s} == set(config.SETTINGS)

    class NewApp(OldApp):
        def add_config_value(self, name, default, rebuild, types=(), description=""):
            seen.append({"name": name, "description": description})

    seen.clear()
    config.register(NewApp())  # type: ignore[arg-type]
    assert all(s.get("description") for s in seen if "name" in s)
