# The kernel tests (run by tests/run.sh through python3-pytest): the moonflow
# under test ($MOONFLOW, default build/release/moonflow) installs its
# kernelspec into a temporary prefix, and Jupyter looks only there and in a
# temporary runtime directory, so no installed kernel or connection file of
# the user takes part.
import atexit
import os
import shutil
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MOONFLOW = os.path.abspath(os.environ.get("MOONFLOW", os.path.join(ROOT, "build/release/moonflow")))

_tmp = tempfile.mkdtemp(prefix="moonflow-kernel-test-")
atexit.register(shutil.rmtree, _tmp, True)
subprocess.run([MOONFLOW, "--install-kernel", "--prefix", _tmp], check=True,
               stdout=subprocess.DEVNULL)
os.environ["JUPYTER_PATH"] = os.path.join(_tmp, "share", "jupyter")
os.environ["JUPYTER_DATA_DIR"] = os.path.join(_tmp, "data")
os.environ["JUPYTER_RUNTIME_DIR"] = os.path.join(_tmp, "runtime")
os.environ["JUPYTER_CONFIG_DIR"] = os.path.join(_tmp, "config")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
