"""The built wheel on its own: installed into a fresh virtual environment and run from an empty folder with an
empty HOME, it answers from the bundled demo, indexes and answers a folder of the user's, learns and serves,
and writes nothing outside its data home.

Two checks of "nothing outside": the virtual environment, the system site-packages and this checkout are
mounted read-only for the commands (a private mount namespace, so even root cannot write; where the machine
allows no namespace the first two are made read-only with chmod, which binds everyone but root), and the
folders around the run (the venv, HOME, the working and temp folders, the checkout) are listed before and after.
The environment borrows the site-packages of the interpreter running the tests (`borrow_site_packages`: the
system's in CI's root install, the virtual environment's when the tests run in one), so installing needs no
network beyond the wheel's own build (pip's isolated build fetches setuptools from the registry).
"""
from __future__ import annotations

import json
import os
import shutil
import site
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

QUESTION = "船长有什么权力？"
MY_DOCS = {
    "咖啡机/日常维护.md": "# 咖啡机日常维护\n\n## 除垢\n\n咖啡机每使用三个月应当除垢一次，水质较硬的地区每月一次。"
                        "除垢时使用专用除垢剂，不得使用食醋。\n\n## 清洗冲煮头\n\n每天营业结束后用清洁片反冲冲煮头五次。\n",
    "咖啡机/故障处理.md": "# 咖啡机故障处理\n\n## 不出水\n\n先检查水箱是否有水，再检查进水阀是否打开。"
                        "仍不出水时关闭电源并联系售后服务。\n\n## 蒸汽无力\n\n蒸汽喷嘴堵塞时用细针疏通，并空喷十秒。\n",
}
MOUNT = ('n=$1; shift; while [ "$n" -gt 0 ]; do mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" '
         '|| exit 97; shift; n=$((n-1)); done; exec "$@"')
SKIPPED = {".git", "test-artifacts", ".pytest_cache", ".hypothesis", "build", "lambdarag.egg-info"}


def listing(root: Path, skip: Path | None = None) -> dict[str, tuple[int, int]]:
    """Returns path → (size, mtime) of every file under `root` (and its folders, as (-1, 0)), leaving out `skip`
    and, at the checkout's top, the folders tests and builds write (SKIPPED; they are mounted read-only too)."""
    found: dict[str, tuple[int, int]] = {}
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        dirs[:] = [d for d in dirs if here / d != skip and not (here == ROOT and d in SKIPPED)]
        for d in dirs:
            found[str(here / d)] = (-1, 0)
        for f in files:
            try:
                st = (here / f).lstat()
            except FileNotFoundError:
                continue
            found[str(here / f)] = (st.st_size, st.st_mtime_ns)
    return found


def namespaces_work(probe: Path) -> bool:
    """Returns whether a private mount namespace can make a folder read-only here (it needs CAP_SYS_ADMIN)."""
    if shutil.which("unshare") is None:
        return False
    probe.mkdir()
    run = subprocess.run(["unshare", "-m", "sh", "-c", MOUNT, "sh", "1", str(probe), "sh", "-c",
                          f"! touch {probe}/x"], capture_output=True)
    return run.returncode == 0 and not (probe / "x").exists()


def borrow_site_packages(venv: Path) -> None:
    """Makes `venv` see the site-packages of the interpreter running this test, after its own.

    ``venv --system-site-packages`` would lend the base interpreter's instead, which lacks the dependencies when
    the tests run inside a virtual environment. A ``.pth`` line runs `site.addsitedir`, so the lent folders'
    own ``.pth`` files work as they do here.
    """
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = subprocess.run([str(venv / "bin" / "python"), "-c", where], capture_output=True, text=True,
                             check=True).stdout.strip()
    lent = "; ".join(f"site.addsitedir({folder!r})" for folder in site.getsitepackages())
    (Path(purelib) / "borrowed-site-packages.pth").write_text(f"import site; {lent}\n", encoding="utf-8")


class Installed:
    """A virtual environment holding the wheel, an empty HOME and working folder, and a way to run commands."""

    def __init__(self, base: Path) -> None:
        self.base, self.venv, self.home = base, base / "venv", base / "home"
        self.cwd, self.tmp = base / "empty", base / "tmp"
        for d in (self.home, self.cwd, self.tmp):
            d.mkdir()
        self.frozen = [self.venv, *map(Path, site.getsitepackages()), ROOT]
        self.namespace = namespaces_work(base / "probe")
        keep = {k: v for k, v in os.environ.items() if not k.startswith(("LAMBDARAG_", "XDG_", "PYTHON", "VIRTUAL_ENV"))}
        self.env = {**keep, "HOME": str(self.home), "TMPDIR": str(self.tmp),
                    "PATH": f"{self.venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}

    def command(self, args: list[str]) -> list[str]:
        """Returns `args` run with the frozen folders read-only (inside a private mount namespace if possible)."""
        if not self.namespace:
            return args
        return ["unshare", "-m", "sh", "-c", MOUNT, "sh", str(len(self.frozen)), *map(str, self.frozen), *args]

    def run(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        out = subprocess.run(self.command([str(self.venv / "bin" / "lambdarag"), *args]), cwd=self.cwd,
                             env=self.env, capture_output=True, text=True, timeout=timeout)
        assert out.returncode == 0, f"lambdarag {' '.join(args)}: {out.stderr[-3000:]}"
        return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    """Returns the wheel built from this checkout (`pip wheel --no-deps`) installed into a fresh virtual env."""
    inst = Installed(tmp_path_factory.mktemp("wheel"))
    dist = inst.base / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(ROOT)], check=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(inst.venv)], check=True)
    borrow_site_packages(inst.venv)
    (wheel,) = dist.glob("lambdarag-*.whl")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(inst.venv / "bin" / "python"), "install", "-q",
                    "--no-deps", "--ignore-installed", "--disable-pip-version-check", str(wheel)], check=True)
    if not inst.namespace:
        for folder in inst.frozen[:-1]:
            subprocess.run(["chmod", "-R", "a-w", str(folder)], check=True)
    where = inst.run("where").stdout
    inst.data_home = Path(next(line.split()[2] for line in where.splitlines() if line.startswith("data home")))
    yield inst
    subprocess.run(["chmod", "-R", "u+w", str(inst.venv)], check=True)


def test_the_wheel_answers_indexes_learns_and_serves_writing_only_in_its_data_home(installed):
    where, home = installed.run("where").stdout, installed.data_home
    assert home.is_relative_to(installed.home) and "(packaged default)" in where
    site = installed.venv / "lib"
    assert str(site) in where, "the demo and config must come from the installed package, not the checkout"
    docs = installed.base / "mydocs"
    for rel, text in MY_DOCS.items():
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text(text, encoding="utf-8")
    before = {r: listing(r, skip=home) for r in (installed.base, ROOT)}   # the shared site-packages is only frozen:
    # other processes on the machine (numba caches of other test runs) may write there meanwhile

    demo = installed.run("ask", QUESTION)
    assert "船长" in demo.stdout and "[来源: " in demo.stdout
    assert "building index 'demo'" not in demo.stderr and "embed" not in demo.stderr   # the demo ships prebuilt
    indexed = installed.run("index", "--corpus", str(docs), "--name", "mine")
    assert "classifier exemplars" not in indexed.stderr                     # their vectors ship too
    mine = json.loads(installed.run("ask", "--index", "mine", "--json", "咖啡机多久除垢一次？").stdout)
    assert mine["citations"] and mine["citations"][0]["source"] == "咖啡机/日常维护.md", mine["citations"]
    assert "三个月" in mine["answer"]
    installed.run("feedback", "confirm", mine["query_id"], mine["citations"][0]["chunk_id"], "--index", "mine")
    assert (home / "mine" / "feedback" / "feedback.sqlite3").is_file()
    served = serve(installed, "mine")
    assert served["citations"] and served["citations"][0]["source"] == "咖啡机/故障处理.md"

    after = {r: listing(r, skip=home) for r in before}
    holders = {str(p) for p in home.parents}                                # made to hold the data home
    changed = {p for r in before for p in set(before[r]) ^ set(after[r])
               | {p for p in before[r].keys() & after[r].keys() if before[r][p] != after[r][p]}} - holders
    assert changed == set(), "written outside the data home"
    assert (home / "demo" / "index" / "manifest.json").is_file() and (home / "mine" / "wiki").is_dir()


def serve(installed: Installed, index: str) -> dict:
    """Returns the demo server's JSON answer to one question, the server started from the wheel (once /ready says it
    is warm; 503 until then) and stopped."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = installed.command([str(installed.venv / "bin" / "lambdarag"), "serve", "--port", str(port),
                                 "--index", index])
    server = subprocess.Popen(command, cwd=installed.cwd, env=installed.env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/ready", timeout=5).read()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, server.stderr.read()[-3000:] \
                    if server.poll() is not None else "server did not start"
                time.sleep(0.5)
        request = urllib.request.Request(f"http://127.0.0.1:{port}/api/search", method="POST",
                                         data=json.dumps({"query": "蒸汽无力怎么办？"}).encode("utf-8"),
                                         headers={"Content-Type": "application/json"})
        return json.loads(urllib.request.urlopen(request, timeout=120).read())
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_an_offline_test_module_passes_against_the_installed_wheel(installed):
    suite = installed.base / "suite" / "tests"
    suite.mkdir(parents=True)
    for name in ("__init__.py", "conftest.py", "scripted_server.py", "test_answers.py", "data/demo_questions.jsonl"):
        (suite / name).parent.mkdir(exist_ok=True)
        shutil.copy(ROOT / "tests" / name, suite / name)
    env = {**installed.env, "LAMBDARAG_HOME": str(installed.data_home),      # reuses the demo index built above
           "LAMBDARAG_CACHE": str(installed.data_home / "cache")}
    out = subprocess.run([str(installed.venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "tests/test_answers.py"], cwd=suite.parent, env=env, capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0 and " passed" in out.stdout, out.stdout[-3000:] + out.stderr[-2000:]
    probe = subprocess.run([str(installed.venv / "bin" / "python"), "-c", "import lambdarag.orchestration as o; print(o.__file__)"],
                           cwd=suite.parent, env=env, capture_output=True, text=True, check=True)
    assert Path(probe.stdout.strip()).is_relative_to(installed.venv)


USER_SCRIPT = '''"""A user's script over the typed public API."""
import asyncio

from lambdarag import SearchResult, asearch, search


def first_cited(result: SearchResult) -> str:
    """Returns the chunk id of the first citation, or "" for an answer that cites nothing."""
    return result.citations[0].chunk_id if result.citations else ""


async def asked_twice(question: str) -> tuple[str, str]:
    awaited: SearchResult = await asearch(question)
    return first_cited(search(question)), first_cited(awaited)


if __name__ == "__main__":
    print(asyncio.run(asked_twice("船长有什么权力？")))
'''


def test_mypy_strict_accepts_a_user_script_typed_by_the_installed_wheel(installed):
    project = installed.base / "typed"
    project.mkdir()
    (project / "user_script.py").write_text(USER_SCRIPT, encoding="utf-8")
    out = subprocess.run([str(installed.venv / "bin" / "python"), "-m", "mypy", "--strict", "--cache-dir", os.devnull,
                          "user_script.py"], cwd=project, env=installed.env, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0 and "Success: no issues found" in out.stdout, out.stdout[-3000:] + out.stderr[-2000:]


USER_PACKAGES = ("skills", "patterns", "orchestration", "domains")
"""Names a user's project may well use for packages of its own: the wheel must install none of them."""


def test_the_wheel_installs_one_import_package_and_answers_beside_a_project_with_its_own_layers(installed):
    (wheel,) = (installed.base / "dist").glob("lambdarag-*.whl")
    with zipfile.ZipFile(wheel) as z:
        tops = {name.split("/")[0] for name in z.namelist()}
        top_level = {n for n in z.namelist() if n.endswith("top_level.txt")}
        assert not top_level or {z.read(n).decode().split()[0] for n in top_level} == {"lambdarag"}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"lambdarag"}, tops
    project = installed.base / "userproj"
    for name in USER_PACKAGES:          # the very collision of issue 43: `from skills import build` is the user's
        (project / name).mkdir(parents=True)
        (project / name / "__init__.py").write_text(f"WHOSE = 'user {name}'\n", encoding="utf-8")
    script = ("import skills, orchestration; from lambdarag import search; r = search('船长有什么权力？');"
              " print(skills.WHOSE, orchestration.WHOSE, r.query_type, r.citations[0].chunk_id if r.citations else '')")
    env = {**installed.env, "LAMBDARAG_HOME": str(installed.data_home), "LAMBDARAG_FEEDBACK": "off"}
    out = subprocess.run(installed.command([str(installed.venv / "bin" / "python"), "-c", script]), cwd=project,
                         env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.startswith("user skills user orchestration "), out.stdout
    assert "#第" in out.stdout.split()[-1], out.stdout
