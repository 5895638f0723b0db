"""Injected lines and unescaped reports (issue 14): whatever bytes a pull request puts in a key, a
value, a name or a file name, an error is exactly one line, no line of any output begins with
``::`` from the input (a GitHub workflow command), no terminal control sequence reaches a report,
and the Markdown comment carries no HTML, link, image or mention from the input.
"""

from __future__ import annotations

import json
import re

import pytest

from gpuplan.core.errors import one_line, safe_text
from gpuplan.render import FORMATS, RenderOptions, render
from tests.hostile.conftest import assert_outcome, run_cli
from tests.hostile.test_malformed_files import CASES, CLUSTER, HF_CONFIG, HF_PROFILE, SERVING_PROFILE, _plan_json

#: Every separator a terminal, a CI log, a browser or ``str.splitlines`` ends a line at.
SEPARATORS = ["\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\r\n"]
INJECTIONS = [sep + "::error file=README.md,line=1::injected" for sep in SEPARATORS] + [
    "\x1b]0;retitled\x07",                 # OSC: retitle the terminal
    "\x1b[2J\x1b[H",                       # CSI: clear the screen
    "\x1b[31mred\x1b[0m",                  # colour
    "\x9b2J",                              # 8-bit CSI
    "\u202eevil",                          # right-to-left override
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "[click](javascript:alert(1)) ![x](https://example.com/t.png)",
    "@everyone `code` | pipe \\ back",
    "[/bold] [link=https://example.com]x[/link]",  # rich markup
]
IDS = [f"inj{i}" for i in range(len(INJECTIONS))]
#: Characters no output or error may carry raw (the JSON formats write them as \\u escapes).
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e]")


def assert_safe_output(text: str, fmt: str) -> None:
    """No raw control character or separator, no line starting with ``::`` from the input."""
    assert not RAW.search(text.replace("\r\n", "\n")), repr(RAW.search(text))
    for line in text.splitlines():
        if line.lstrip().startswith("::"):
            assert fmt == "github", line
    if fmt == "github":  # one command per line, its properties escaped (no ':' or ',' from the input)
        assert all(re.match(r"::(notice|error|warning)( [^:]*)?::", line) for line in text.splitlines()), text
    if fmt == "markdown":
        assert not re.search(r"<(script|img)|\]\(|@everyone", text), text
    if fmt in ("html", "junit"):
        assert "<script" not in text and "<img" not in text


def assert_one_line(err: str) -> None:
    assert err.endswith("\n") and len(err.splitlines()) == 1, repr(err)
    assert not RAW.search(err[:-1]), repr(err)
    assert err.startswith("gpuplan: ")


# -- the sanitiser ------------------------------------------------------------------------------

@pytest.mark.parametrize("text", INJECTIONS, ids=IDS)
def test_safe_text_is_one_line_without_controls(text):
    for drop in (False, True):
        out = safe_text(text, drop_terminal=drop)
        assert len(out.splitlines()) <= 1 and not RAW.search(out)
    assert "\x1b" not in safe_text("\x1b[31mred", drop_terminal=True) and "red" in safe_text("\x1b[31mred")
    assert safe_text("a\nb\u2028c") == "a\\nb\\u2028c"


def test_an_error_names_a_hostile_file_and_field_on_one_line():
    from gpuplan.core.errors import InputError

    line = InputError("bad\u2029value", file="x\n::error::f.toml", field="k\x85::warning::k").one_line()
    assert len(line.splitlines()) == 1 and "\\n::error::f.toml" in line and "\\x85" in line
    assert one_line("a\n\n b", limit=4) == "a..."[:4] or len(one_line("a\n\n b", limit=4)) <= 4


# -- error lines: every input slot ----------------------------------------------------------------

@pytest.mark.parametrize("inj", INJECTIONS, ids=IDS)
def test_a_hostile_key_in_every_slot_is_one_error_line(tmp_path, inj):
    key = json.dumps("x" + inj)  # a TOML basic string and a JSON string alike
    (tmp_path / "p.toml").write_text(SERVING_PROFILE.replace("[model]\n", f"[model]\n{key} = 1\n", 1))
    (tmp_path / "ok.toml").write_text(SERVING_PROFILE)
    (tmp_path / "cluster.toml").write_text(CLUSTER + f"{key} = 1\n")
    plan = _plan_json()
    (tmp_path / "plan.json").write_text("{" + f"{key}: 1, " + plan.lstrip()[1:])
    (tmp_path / "cases.toml").write_text(CASES.replace("[case.run]\n", f"[case.run]\n{key} = 1\n"))
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "config.json").write_text("{" + f"{key}: [1, 2], " + HF_CONFIG.lstrip()[1:].replace(
        '"num_hidden_layers": 4', f'"num_hidden_layers": {key}'))
    (tmp_path / "hf" / "p.toml").write_text(HF_PROFILE)
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "x.toml").write_text(f'[[gpu]]\nid = "h100-sxm-80gb"\n{key} = 1\n')
    runs = {
        "profile": ["recommend", "p.toml", "-f", "json"],
        "hf-config": ["recommend", "hf/p.toml", "-f", "json"],
        "overlay": ["recommend", "ok.toml", "-f", "json", "--catalog", "overlay"],
        "cluster": ["check", "ok.toml", "--against", "cluster.toml"],
        "plan": ["render", "plan.json"],
        "cases": ["validate", "cases.toml"],
    }
    for slot, argv in runs.items():
        r = run_cli(*argv, cwd=tmp_path)
        assert_outcome(r, allowed=(2,) if slot != "cases" else (1, 2))
        if r.code == 2:
            assert_one_line(r.err), slot


@pytest.mark.parametrize("inj", INJECTIONS[:11] + INJECTIONS[11:13], ids=IDS[:13])
def test_a_hostile_file_name_is_one_error_line(tmp_path, inj):
    """An overlay file name (the walk reports it) and a command-line file name."""
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    name = ("x" + inj + ".toml").replace("/", "_")
    try:
        (overlay / name).write_text("[[gpu]]\nid = 3\n")
    except (OSError, ValueError):
        pytest.skip("the file system refuses this name")
    r = run_cli("catalog", "gpus", "--catalog", str(overlay), cwd=tmp_path)
    assert_outcome(r, allowed=(2,))
    assert_one_line(r.err)
    r = run_cli("recommend", str(tmp_path / ("missing" + inj + ".toml")), cwd=tmp_path)
    assert_outcome(r, allowed=(2,))
    assert_one_line(r.err)


@pytest.mark.parametrize("inj", INJECTIONS, ids=IDS)
def test_a_hostile_value_is_one_error_line(tmp_path, inj):
    value = json.dumps("x" + inj)
    for text in (SERVING_PROFILE.replace("[model]\n", f"[model]\nhf_config = {value}\n", 1),
                 SERVING_PROFILE.replace('allow_gpus = ["h100", "l40s"]', f"allow_gpus = [{value}]"),
                 SERVING_PROFILE.replace('precision', f"precision = {value}\n#", 1)):
        (tmp_path / "p.toml").write_text(text)
        r = run_cli("recommend", "p.toml", "-f", "json", cwd=tmp_path)
        assert_outcome(r, allowed=(2,))
        assert_one_line(r.err)


# -- outputs: every format -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def hostile_plan():
    from tests.render.fixtures import synthetic_plan

    plan = synthetic_plan()
    text = "".join(INJECTIONS)
    findings = [f.model_copy(update={"message": f.message + text}) for f in plan.findings]
    return plan.model_copy(update={"workload": "w" + text[:90], "findings": findings,
                                   "profile": "p" + INJECTIONS[0] + ".toml"})


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_plan_format_escapes_hostile_strings(hostile_plan, fmt):
    assert_safe_output(render(hostile_plan, fmt, RenderOptions()), fmt)
    coloured = render(hostile_plan, fmt, RenderOptions(color=True, verbose=2))
    assert_safe_output(re.sub(r"\x1b\[[0-9;]*m", "", coloured), fmt)  # only gpuplan's own colours remain


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_hostile_profile_name_through_the_cli(tmp_path, fmt):
    name = json.dumps(("n" + "".join(INJECTIONS[:12]))[:100])
    (tmp_path / "p.toml").write_text(SERVING_PROFILE.replace('name = "chat-8b-serving"', f"name = {name}"))
    r = run_cli("recommend", "p.toml", "-f", fmt, cwd=tmp_path)
    assert_outcome(r, allowed=(0, 1))
    assert_safe_output(r.out, fmt)
    for line in r.err.splitlines():
        assert line.startswith("gpuplan: ") and not RAW.search(line)
    if fmt == "json":  # the data is kept exactly: JSON escapes, it does not rewrite
        assert json.loads(r.out)["workload"] == json.loads(name)


@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "sarif", "junit", "github"])
def test_check_and_diff_formats_escape_hostile_names(tmp_path, fmt):
    name = json.dumps(("c" + "".join(INJECTIONS[:12]))[:100])
    (tmp_path / "p.toml").write_text(SERVING_PROFILE.replace('name = "chat-8b-serving"', f"name = {name}"))
    (tmp_path / "cluster.toml").write_text(CLUSTER.replace('name = "row-a"', f"name = {name}"))
    r = run_cli("check", "p.toml", "--against", "cluster.toml", "-f", fmt, cwd=tmp_path)
    assert_outcome(r, allowed=(0, 1))
    assert_safe_output(r.out, fmt)
    if fmt in ("table", "json", "markdown"):
        r = run_cli("diff", "p.toml", "p.toml", "-f", fmt, cwd=tmp_path)
        assert_outcome(r, allowed=(0, 1))
        assert_safe_output(r.out, fmt)


def test_catalog_listings_escape_overlay_names(tmp_path):
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    name = json.dumps("g" + "".join(INJECTIONS[:12]))
    (overlay / "x.toml").write_text(f'[[gpu]]\nid = "h100-sxm-80gb"\nname = {name}\n')
    for argv in (["catalog", "gpus"], ["catalog", "gpus", "h100"], ["catalog", "gpus", "h100", "-f", "json"]):
        r = run_cli(*argv, "--catalog", str(overlay), cwd=tmp_path)
        assert_outcome(r, allowed=(0,))
        assert_safe_output(r.out, "table")


def test_markdown_escapes_html_and_markdown_syntax():
    from gpuplan.render.safe import md_escape

    assert md_escape("<b>&[x](y)`|\\@me") == "&lt;b&gt;&amp;&#91;x&#93;(y)&#96;&#124;&#92;&#64;me"


def test_json_keeps_values_and_escapes_raw_separators():
    from gpuplan.render.json_ import to_json

    text = to_json({"w": "a\u2028b\x85c\nd"})
    assert "\u2028" not in text and "\x85" not in text and json.loads(text) == {"w": "a\u2028b\x85c\nd"}



def test_an_internal_error_is_exactly_one_line(tmp_path, monkeypatch):
    """Exit 3 (a bug) prints one line too, whatever the exception's message holds."""
    from gpuplan.render import json_

    def crash(plan, options):
        raise RuntimeError("first line\nsecond line\u2028::error::third\x1b[2J" + "x" * 1000)

    monkeypatch.setattr(json_, "render", crash)
    (tmp_path / "p.toml").write_text(SERVING_PROFILE)
    r = run_cli("recommend", "p.toml", "-f", "json", cwd=tmp_path)
    assert r.code == 3 and "internal error: RuntimeError: first line\\nsecond line" in r.err
    assert_one_line(r.err)
    assert len(r.err) < 400


@pytest.mark.parametrize("profile", ["a\x00b", "x" * 5000, "../../../../etc/passwd", "/etc/passwd",
                                     "p\n::error::x.toml", "/dev/zero"], ids=["nul", "long", "dotdot", "abs",
                                                                               "newline", "device"])
def test_a_hostile_profile_field_of_a_saved_plan(tmp_path, profile):
    """render follows a saved plan's ``profile`` for line numbers: never a crash, never outside the
    plan's tree without --allow-outside-paths, and its name is escaped in every anchored format."""
    plan = json.loads(_plan_json())
    plan["profile"] = profile
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    for fmt in ("sarif", "github", "junit", "markdown", "table"):
        for extra in ([], ["--allow-outside-paths"]):
            r = run_cli("render", "plan.json", "-f", fmt, *extra, cwd=tmp_path)
            assert_outcome(r, allowed=(0, 2) if extra else (0,))
            assert_safe_output(r.out, fmt)
