# The notebooks in examples/ run top to bottom headless: jupyter-execute with
# the moonflow kernel, then nbclient (jupyter-execute's engine) once more to
# keep the outputs, checked with nbformat.
import glob
import os
import shutil
import subprocess

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import ROOT

NOTEBOOKS = sorted(glob.glob(os.path.join(ROOT, "examples", "*.ipynb")))
TIMEOUT = 300


def test_there_are_notebooks():
    names = {os.path.basename(p) for p in NOTEBOOKS}
    assert {"tour.ipynb", "autodiff.ipynb", "training.ipynb", "profiling.ipynb"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_jupyter_execute(path, tmp_path):
    done = subprocess.run(["jupyter-execute", "--kernel_name=moonflow",
                           f"--timeout={TIMEOUT}", path],
                          cwd=tmp_path, capture_output=True, text=True, timeout=2 * TIMEOUT)
    assert done.returncode == 0, done.stderr[-3000:]


def executed(name, tmp_path):
    nb = nbformat.read(os.path.join(ROOT, "examples", name), as_version=4)
    NotebookClient(nb, kernel_name="moonflow", timeout=TIMEOUT,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    nbformat.validate(nb)
    return nb


def cell_with(nb, text):
    cells = [c for c in nb.cells if c.cell_type == "code" and text in c.source]
    assert len(cells) == 1, text
    return cells[0]


def outputs(cell, output_type):
    return [o for o in cell.outputs if o.output_type == output_type]


def test_tour_outputs(tmp_path):
    nb = executed("tour.ipynb", tmp_path)
    result = outputs(cell_with(nb, "x:matmul(x)"), "execute_result")[0]
    assert "[[ 7. 10.]" in result.data["text/plain"]
    assert "<td>22</td>" in result.data["text/html"]
    plot = outputs(cell_with(nb, "mf.plot("), "display_data")
    assert len(plot) == 1 and plot[0].data["image/svg+xml"].lstrip().startswith("<")
    assert "<svg" in plot[0].data["image/svg+xml"]
    error = outputs(cell_with(nb, "mf.matmul(mf.ones{2, 3}"), "error")
    assert len(error) == 1
    assert "matmul" in error[0].evalue
    assert "stack traceback:" in error[0].traceback
    help_text = "".join(o.text for o in outputs(cell_with(nb, 'help "matmul"'), "stream"))
    assert "mf.matmul(a, b" in help_text


def test_autodiff_outputs(tmp_path):
    nb = executed("autodiff.ipynb", tmp_path)
    grad = outputs(cell_with(nb, "t:gradient(y, x)"), "execute_result")[0]
    assert grad.data["text/plain"].startswith("27.\n")
    if shutil.which("dot"):
        picture = outputs(cell_with(nb, "g:render()"), "display_data")
        assert len(picture) == 1 and "<svg" in picture[0].data["image/svg+xml"]
        assert "gradients/" in picture[0].data["image/svg+xml"]
    schedule = "".join(o.text for o in outputs(cell_with(nb, "schedule = true"), "stream"))
    assert "in-degree" in schedule or "ready" in schedule


def test_training_updates_one_display(tmp_path):
    nb = executed("training.ipynb", tmp_path)
    fit = cell_with(nb, "model:fit(")
    displays = outputs(fit, "display_data")
    # one progress area, updated in place to its last state, then the loss curve
    progress = [d for d in displays if "text/plain" in d.data and "epoch 5/5" in d.data["text/plain"]]
    assert len(progress) == 1
    assert "100%" in progress[0].data["text/plain"]
    assert not any("step" in o.text for o in outputs(fit, "stream"))
    curves = [d for d in displays if "image/svg+xml" in d.data]
    assert len(curves) == 1 and "loss" in curves[0].data["image/svg+xml"]


def test_profiling_outputs(tmp_path):
    nb = executed("profiling.ipynb", tmp_path)
    report = outputs(cell_with(nb, "prof = mf.profile("), "execute_result")[0]
    html = report.data["text/html"]
    assert "<th>op</th>" in html
    assert "<tr><td>Conv2D" in html and "<tr><td>Conv2DBackpropFilter" in html
    gemms = "".join(o.text for o in outputs(cell_with(nb, "prof:gemms()"), "stream"))
    assert "GEMM" in gemms and "im2col" in gemms
