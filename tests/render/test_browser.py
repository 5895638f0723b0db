"""The HTML report in a real browser (issue 22): headless chromium lays out the two-phase example's
report (and the three-tier NVL72 one), every picture has a non-zero size, no two labels of a picture
overlap as the browser draws them (its own font, not an estimate), the page logs nothing to the
console, and it renders to a PNG. Skipped where no chromium is installed (`.ci/run` installs
Debian's)."""

from __future__ import annotations

import html as html_lib
import json
import re
import shutil
import subprocess

import pytest

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH")

#: Injected into a copy of the page (the report itself has no script): writes the laid-out size of
#: every <svg> into the DOM, which --dump-dom then prints.
MEASURE = ('<script>var o=[],l=[];document.querySelectorAll("svg").forEach(function(s,i){var b=s.getBoundingClientRect();'
           'o.push(Math.round(b.width)+"x"+Math.round(b.height));s.querySelectorAll("text").forEach(function(t){'
           'if(t.getAttribute("transform"))return;var r=t.getBoundingClientRect();'
           'l.push([i,t.textContent,r.left-b.left,r.top-b.top,r.right-b.left,r.bottom-b.top,b.width])})});'
           'var p=document.createElement("pre");p.id="svg-sizes";p.textContent=o.join(" ");document.body.appendChild(p);'
           'var q=document.createElement("pre");q.id="svg-labels";q.textContent=JSON.stringify(l);'
           'document.body.appendChild(q);</script>')


def _chromium(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--disable-extensions", f"--user-data-dir={cwd}/profile", *args],
                          capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.fixture(scope="module", params=["llama-70b-train-serve", "frontier-405b-training"])
def report(tmp_path_factory, request):
    from gpuplan.cli.app import main

    folder = tmp_path_factory.mktemp("browser")
    path = folder / f"{request.param}.html"
    with pytest.raises(SystemExit) as exc:
        main(["recommend", f"examples/{request.param}.toml", "--format", "html", "-o", str(path), "-q"])
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
    # both phases: roofline, topology, racks each, and the serving frontier; training only: three
    assert len(boxes) >= (6 if report.stem == "llama-70b-train-serve" else 3), boxes
    assert all(w > 0 and h > 0 for w, h in boxes), boxes
    labels = json.loads(html_lib.unescape(re.search(r'<pre id="svg-labels">([^<]*)</pre>', r.stdout).group(1)))
    for k, (i, text, x0, y0, x1, y1, width) in enumerate(labels):
        assert x0 >= -1 and x1 <= width + 1, f"picture {i}: {text!r} leaves the picture"
        for j, other, u0, v0, u1, v1, _ in labels[k + 1:]:
            # overlapping by more than half a pixel both ways (lines 13 px apart touch, they do not overlap)
            assert j != i or min(x1, u1) - max(x0, u0) <= 0.5 or min(y1, v1) - max(y0, v0) <= 0.5, \
                f"picture {i}: {text!r} and {other!r} overlap"
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
