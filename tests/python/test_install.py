"""The README's install recipe: a virtual environment made with Debian's python3 and
--system-site-packages, scripts/install-python copying the built package into it; the module
then imports there without PYTHONPATH and renders."""
import os
import pathlib
import subprocess
import sys

import chatwire
from conftest import DATA, ROOT


def test_install_into_a_virtual_environment(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(venv)], check=True)
    build = pathlib.Path(chatwire.__file__).resolve().parents[2]  # <build>/python/chatwire
    subprocess.run([str(ROOT / "scripts/install-python"), str(venv), str(build)], check=True,
                   capture_output=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    code = ("import chatwire, dask, distributed; "
            f"t = chatwire.AutoTokenizer.from_pretrained({str(DATA / 'models/tokenized/qwen3')!r}); "
            "print(chatwire.__file__); print(len(t.apply_chat_template([{'role': 'user', 'content': 'hi'}])))")
    out = subprocess.run([str(venv / "bin/python"), "-c", code], check=True, capture_output=True,
                         text=True, env=env, cwd=tmp_path).stdout.splitlines()
    assert out[0].startswith(str(venv))
    assert int(out[1]) > 0
