"""The opt-in resident answerer (`serve --socket`): it answers this user's `ask` over a socket, models kept loaded.

`lambdarag serve --socket` warms up once and listens in the data home, so a warm `ask` pays for a small client
process and the question, not for the imports.

The client half (`ask_resident`) imports only the standard library and `skills.store.home`: it trusts the socket only
if it is a socket owned by this user with no group or other permission, and only a peer running as this user; on
anything else (another owner, a wrong mode, no listener, a resident stopped while the client waits, a reply not in
`PROTOCOL`, a resident started with another environment) it prints one note and `ask` answers in-process. The resident answers only `ask` (never `--stream`),
only for a peer of its own uid (SO_PEERCRED), one question at a time, in the asker's working folder, with the
same code the in-process `ask` runs (`cli.ask_argv`), so its output and exit status are the in-process ones.
It logs each question's CPU seconds, which a warm `ask` costs on top of the client's.
"""
from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import socket
import stat
import struct
import sys
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from lambdarag.errors import ResidentRefused, ResidentUnavailable

PROTOCOL = "lambdarag-ask/1"
SOCKET_NAME = "ask.sock"
MAX_REQUEST = 1 << 20
"""Bytes a request may hold (a question and its options); more is refused unread."""
POLL_SECONDS = 1.0
"""How often a client waiting for its answer checks that the resident can still give it (`alive`): a resident
stopped by Ctrl-Z in its terminal would otherwise keep every `ask` waiting."""
REQUEST_SECONDS = 10.0
"""How long the resident waits for a connected client to send its request before dropping it."""
ENVIRONMENT = ("LAMBDARAG_", "MILVUS_", "OPENAI_")
"""Prefixes of the environment variables an answer depends on (with names ending in _KEY or _TOKEN): a resident
answers only a client whose values of them are its own."""
AskArgv = Callable[[list[str]], int]
"""Answers `lambdarag *argv` in this process and returns its exit status, or raises `ResidentRefused` if it is not
an `ask` the resident serves (`cli.ask_argv`)."""


def socket_path() -> Path:
    """Returns where the resident listens: `<data home>/ask.sock`."""
    from lambdarag.skills.store.home import data_home

    return data_home().absolute() / SOCKET_NAME


def environment_digest(environ: Optional[dict[str, str]] = None) -> str:
    """Returns a digest of the environment variables an answer depends on (`ENVIRONMENT`), the data home made
    absolute; a digest, so no key crosses the socket."""
    environ = dict(os.environ if environ is None else environ)
    if environ.get("LAMBDARAG_HOME"):
        environ["LAMBDARAG_HOME"] = os.path.abspath(environ["LAMBDARAG_HOME"])
    relevant = sorted((k, v) for k, v in environ.items()
                      if k.startswith(ENVIRONMENT) or k.endswith(("_KEY", "_TOKEN")))
    return hashlib.sha256(json.dumps(relevant).encode()).hexdigest()


def peer(conn: socket.socket) -> tuple[int, int]:
    """Returns the pid and uid of the process at the other end of a unix socket (Linux's SO_PEERCRED)."""
    pid, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return pid, uid


def stopped(pid: int) -> bool:
    """Whether process `pid` can no longer answer: stopped (job control, a tracer), a zombie, or gone."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return True
    return state in "TtZX"


def untrusted(path: Path) -> Optional[str]:
    """Returns why the file at `path` is not a resident's socket this user may trust, or None if it may be."""
    info = os.lstat(path)
    if not stat.S_ISSOCK(info.st_mode):
        return f"{path} is not a socket"
    if info.st_uid != os.getuid():
        return f"{path} belongs to uid {info.st_uid}, not to this user (uid {os.getuid()})"
    if info.st_mode & 0o077:
        return f"{path} has mode {stat.S_IMODE(info.st_mode):o}; a resident's socket is 600"
    return None


def read_all(conn: socket.socket, limit: int, waiting: Optional[Callable[[], None]] = None) -> bytes:
    """Returns what `conn` sends until it shuts its side, or raises ValueError past `limit` bytes; on each timeout
    of `conn` it calls `waiting` (which raises to give up) or, without one, lets the timeout raise."""
    parts, size = [], 0
    while True:
        try:
            chunk = conn.recv(65536)
        except TimeoutError:
            if waiting is None:
                raise
            waiting()
            continue
        if not chunk:
            break
        size += len(chunk)
        if size > limit:
            raise ValueError(f"more than {limit} bytes")
        parts.append(chunk)
    return b"".join(parts)


def alive(pid: int) -> None:
    """Raises ResidentUnavailable if the resident `pid` a client waits for is stopped or gone: it would never reply."""
    if stopped(pid):
        raise ResidentUnavailable(f"the resident (pid {pid}) is stopped and cannot answer")


def note(why: str) -> None:
    """Tells the asker the resident was not used, and why."""
    print(f"lambdarag ask: not using the resident answerer: {why}; answering in-process", file=sys.stderr)


def ask_resident(argv: Sequence[str]) -> Optional[int]:
    """Returns the exit status of `ask argv` answered by the resident (its output printed), or None when `ask`
    should answer in-process: no socket (silently), or one not to be trusted or not answering (with a `note`)."""
    path = socket_path()
    try:
        why = untrusted(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        why = f"{path}: {e.strerror}"
    if why:
        note(why)
        return None
    request = {"protocol": PROTOCOL, "argv": list(argv), "cwd": os.getcwd(), "env": environment_digest()}
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(2.0)
            conn.connect(str(path))
            pid, uid = peer(conn)
            if uid != os.getuid():
                note(f"{path} is served by uid {uid}, not by this user")
                return None
            conn.sendall(json.dumps(request).encode())
            conn.shutdown(socket.SHUT_WR)
            conn.settimeout(POLL_SECONDS)
            reply = json.loads(read_all(conn, 1 << 28, lambda: alive(pid)))
    except ResidentUnavailable as e:
        note(str(e))
        return None
    except (OSError, ValueError) as e:
        note(f"{path}: {e}")
        return None
    if not isinstance(reply, dict) or reply.get("protocol") != PROTOCOL:
        note(f"{path} did not answer in protocol {PROTOCOL}")
        return None
    if "refused" in reply:
        note(f"the resident refused: {reply['refused']}")
        return None
    if not (isinstance(reply.get("exit"), int) and isinstance(reply.get("stdout"), str)
            and isinstance(reply.get("stderr"), str)):
        note(f"{path} sent a reply without exit, stdout and stderr")
        return None
    sys.stdout.write(reply["stdout"])
    sys.stdout.flush()
    sys.stderr.write(reply["stderr"])
    return reply["exit"]


def answered(request: Any, ask_argv: AskArgv) -> dict:
    """Returns the reply to one request: `ask`'s exit status and output, as the in-process `ask` would give them."""
    if not isinstance(request, dict) or request.get("protocol") != PROTOCOL:
        raise ResidentRefused(f"not a {PROTOCOL} request")
    if request.get("env") != environment_digest():
        raise ResidentRefused("it was started with other LAMBDARAG_*, MILVUS_*, OPENAI_* or key variables than this "
                              "ask's; restart it from this environment")
    argv, cwd = request.get("argv"), request.get("cwd")
    if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv) and isinstance(cwd, str)):
        raise ResidentRefused("argv must be a list of strings and cwd a string")
    out, err = io.StringIO(), io.StringIO()
    handler = logging.StreamHandler(err)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    root, here = logging.getLogger(), os.getcwd()
    kept, level = root.handlers[:], root.level
    root.handlers = [handler]
    try:
        os.chdir(cwd)
        with redirect_stdout(out), redirect_stderr(err):
            code = ask_argv(argv)
    finally:
        os.chdir(here)
        root.handlers, root.level = kept, level
    return {"protocol": PROTOCOL, "exit": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


def answer_one(conn: socket.socket, ask_argv: AskArgv) -> None:
    """Answers one connection: refuses a peer of another uid without reading it, else replies to its request."""
    uid = peer(conn)[1]
    if uid != os.getuid():
        print(f"refused a connection from uid {uid}", file=sys.stderr)
        return
    cpu, start = time.process_time(), time.perf_counter()
    try:
        conn.settimeout(REQUEST_SECONDS)
        request = json.loads(read_all(conn, MAX_REQUEST))
        conn.settimeout(None)
        reply = answered(request, ask_argv)
    except ResidentRefused as e:
        reply = {"protocol": PROTOCOL, "refused": str(e)}
    except (OSError, ValueError) as e:
        reply = {"protocol": PROTOCOL, "refused": f"unreadable request: {e}"}
    except Exception as e:  # a fault while answering: the client answers in-process and the resident stays up
        reply = {"protocol": PROTOCOL, "refused": f"internal error: {type(e).__name__}: {e}"}
    spent = time.process_time() - cpu
    reply["cpu_s"] = round(spent, 4)
    print(f"{'refused' if 'refused' in reply else 'answered'} in {time.perf_counter() - start:.3f}s, "
          f"{spent:.3f} CPU-s", file=sys.stderr, flush=True)
    try:
        conn.sendall(json.dumps(reply, ensure_ascii=False).encode())
    except OSError:
        pass            # the client went away; it answers in-process if it still wants an answer


def claim(path: Path) -> None:
    """Makes `path` free for a new socket: removes a stale socket of this user's, refuses anything else."""
    try:
        why = untrusted(path)
    except FileNotFoundError:
        return
    if why:
        raise ResidentUnavailable(f"serve --socket: {why}; remove it first")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except ConnectionRefusedError:
            path.unlink()
            return
    raise ResidentUnavailable(f"serve --socket: a resident already answers at {path}")


def listen(path: Path) -> socket.socket:
    """Returns a unix socket listening at `path`, created with mode 600 (no moment with a wider mode)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mask = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(mask)
    listener.listen(16)
    return listener


def serve_socket(config: Any, index: Optional[str], ask_argv: AskArgv) -> int:
    """Warms up on `index` (as `serve` does), then answers `ask` at `socket_path()` with `ask_argv` until stopped."""
    import signal

    from lambdarag.orchestration.serving import warm

    if not hasattr(socket, "SO_PEERCRED"):
        raise ResidentUnavailable("serve --socket needs SO_PEERCRED (Linux) to check who asks")
    if os.environ.get("LAMBDARAG_HOME"):
        os.environ["LAMBDARAG_HOME"] = os.path.abspath(os.environ["LAMBDARAG_HOME"])
    path = socket_path()
    if len(os.fsencode(path)) > 100:
        raise ResidentUnavailable(f"serve --socket: {path} is too long for a unix socket; set LAMBDARAG_HOME to a "
                                  f"shorter path")
    claim(path)
    warm(config, index)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with listen(path) as listener:
        print(f"ready: answering `lambdarag ask` at {path}", file=sys.stderr, flush=True)
        try:
            while True:
                conn, _ = listener.accept()
                with conn:
                    answer_one(conn, ask_argv)
        except KeyboardInterrupt:
            return 0
        finally:
            path.unlink(missing_ok=True)
