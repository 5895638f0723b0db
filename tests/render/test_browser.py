"""The HTML report in a real browser (issue 22): headless chromium lays out the two-phase example's
report, every picture has a non-zero size, the page logs nothing to the console, and it renders to a
PNG. Skipped where no chromium is installed (`.ci/run` installs Debian's)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH")

#: Injected into a copy of the page (the report itself has no script): writes the laid-out size of
#: every <svg> into the DOM, which --dump-dom then prints.
MEASURE = ('<script>var o=[];document.querySelectorAll("svg").forEach(function(s){var b=s.getBoundingClientRect();'
           'o.push(Math.round(b.width)+"x"+Math.round(b.height))});var p=document.createElement("pre");'
           'p.id="svg-sizes";p.textContent=o.join(" ");document.body.appendChild(p);</script>')


def _chromium(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--disable-extensions", f"--user-data-dir={cwd}/profile", *args],
                          capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from gpuplan.cli.app import main

    folder = tmp_path_factory.mktemp("browser")
    path = folder / "report.html"
    with pytest.raises(SystemExit) as exc:
        main(["recommend", "examples/llama-70b-train-serve.toml", "--format", "html", "-o", str(path), "-q"])
    assert exc.value.code in (0, 1)
    return path


def test_every_picture_has_a_size_and_the_page_logs_no_errors(report):
    html = report.read_text()
    assert "<script" not in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    measured = report.with_name("measured.html")
    measured.write_text(html.replace("</body>", MEASURE + "</body>"))
    r = _chromium("--enable-logging=stderr", "--v=0", "--dump-dom", measured.as_uri(), cwd=report.parent)
    assert r.returncode == 0, r.stderr[-2000:]
    sizes = re.search(r'<pre id="svg-sizes">([^<]*)</pre>', r.stdout)
    assert sizes, r.stdout[-2000:]
    boxes = [tuple(map(int, s.split("x"))) for s in sizes.group(1).split()]
    assert len(boxes) >= 6, boxes
    assert all(w > 0 and h > 0 for w, h in boxes), boxes
    console = [line for line in r.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], console


def test_report_renders_to_png(report):
    png = report.with_name("report.png")
    r = _chromium(f"--screenshot={png}", "--window-size=1280,4000", "--hide-scrollbars", report.as_uri(),
                  cwd=report.parent)
    assert r.returncode == 0, r.stderr[-2000:]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1280, 4000)
