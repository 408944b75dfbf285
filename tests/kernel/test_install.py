# moonflow --install-kernel: the kernelspec Jupyter finds, where each option
# puts it, and clear errors for bad options.
import json
import os
import struct
import subprocess

from jupyter_client.kernelspec import KernelSpecManager

from conftest import MOONFLOW


def install(*args, env=None):
    return subprocess.run([MOONFLOW, "--install-kernel", *args], capture_output=True, text=True,
                          env=env)


def test_prefix_spec_is_found_and_names_this_binary(tmp_path):
    done = install("--prefix", str(tmp_path))
    assert done.returncode == 0, done.stderr
    spec_dir = tmp_path / "share" / "jupyter" / "kernels" / "moonflow"
    spec = json.loads((spec_dir / "kernel.json").read_text())
    assert spec["argv"] == [os.path.realpath(MOONFLOW), "--kernel", "-f", "{connection_file}"]
    assert spec["language"] == "lua" and spec["interrupt_mode"] == "signal"
    for size in (32, 64):
        png = (spec_dir / f"logo-{size}x{size}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        assert struct.unpack(">II", png[16:24]) == (size, size)
    ksm = KernelSpecManager(kernel_dirs=[str(tmp_path / "share" / "jupyter" / "kernels")])
    found = ksm.get_kernel_spec("moonflow")
    assert found.display_name == "moonflow (Lua 5.4)"
    assert set(ksm.find_kernel_specs()) >= {"moonflow"}


def test_user_spec_goes_to_the_jupyter_data_dir(tmp_path):
    env = dict(os.environ, JUPYTER_DATA_DIR=str(tmp_path / "data"))
    assert install("--user", env=env).returncode == 0
    assert (tmp_path / "data" / "kernels" / "moonflow" / "kernel.json").exists()
    env = dict(os.environ, HOME=str(tmp_path / "home"))
    env.pop("JUPYTER_DATA_DIR", None)
    env.pop("XDG_DATA_HOME", None)
    assert install("--user", env=env).returncode == 0
    assert (tmp_path / "home/.local/share/jupyter/kernels/moonflow/kernel.json").exists()


def test_bad_options_are_refused():
    done = install("--usr")
    assert done.returncode != 0
    assert "expected no option, --user or --prefix DIR, got '--usr'" in done.stderr
    done = install("--prefix")
    assert done.returncode != 0 and "--prefix" in done.stderr
    done = subprocess.run([MOONFLOW, "--kernel"], capture_output=True, text=True)
    assert done.returncode != 0 and "--kernel -f CONNECTION_FILE" in done.stderr
    done = subprocess.run([MOONFLOW, "--kernel", "-f", "/nonexistent/kernel.json"],
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert "cannot open connection file '/nonexistent/kernel.json'" in done.stderr


def test_unwritable_place_is_an_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    done = install("--prefix", str(blocker))
    assert done.returncode != 0
    assert "install-kernel" in done.stderr and "not a directory" in done.stderr.lower()
