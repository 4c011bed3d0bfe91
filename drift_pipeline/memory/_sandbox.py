"""Launcher that isolates a backend worker before any backend code runs.

Run as ``python -m drift_pipeline.memory._sandbox CONFIG_JSON``. It is harness code: it sets up
the strongest isolation this process can get, then ``exec``s the worker, so the backend starts in
a process that cannot see the generated world even if it searches the whole filesystem.

Levels, strongest first (the one that held is reported to the harness and recorded):

- ``unprivileged-user+mount-namespace`` (harness runs as root): a private mount namespace in
  which every protected path (the data root) is covered by an empty read-only tmpfs, the home of
  the interpreter (often ``/root``) is replaced by a tmpfs exposing only the interpreter, then
  the process drops to an unprivileged uid of its own for good (``no_new_privs`` set, so no
  set-uid program can raise it again), so it can neither read the real paths nor unmount.
- ``user+mount-namespace`` (not root, user namespaces allowed): the same covering mounts in a new
  user namespace, with every capability dropped and ``no_new_privs`` set so they cannot be undone.
- ``process``: a separate process with a scrubbed environment and its own folder only.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import stat
import sys
from pathlib import Path

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
PR_SET_SECUREBITS = 28
SECBIT_NOROOT = 1
SECBIT_NOROOT_LOCKED = 2
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
NOBODY = 65534

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(
    source: str | None, target: str, fstype: str | None, flags: int, data: str | None
) -> None:
    _check(
        _libc.mount(
            source.encode() if source else None,
            target.encode(),
            fstype.encode() if fstype else None,
            flags,
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _cover(path: str) -> None:
    """Hide a folder behind an empty, read-only, unusable tmpfs."""
    _mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=000")


def _hidden_ancestor(path: Path) -> Path | None:
    """The outermost folder on ``path`` that ``nobody`` cannot traverse, if any."""
    for ancestor in reversed(path.parents):
        if ancestor == Path("/"):
            continue
        mode = ancestor.stat().st_mode
        if not mode & stat.S_IXOTH:
            return ancestor
    return None


def _expose_interpreter(prefix: Path, scratch: Path) -> None:
    """Replace the folder hiding the interpreter with a tmpfs that contains only it."""
    hidden = _hidden_ancestor(prefix / "bin")
    if hidden is None:
        return
    scratch.mkdir(parents=True, exist_ok=True)
    _mount(str(prefix), str(scratch), None, MS_BIND | MS_REC, None)
    _mount("tmpfs", str(hidden), "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=755")
    target = prefix
    target.mkdir(parents=True, exist_ok=True)
    for parent in [target, *target.parents]:
        if parent == hidden.parent:
            break
        os.chmod(parent, 0o755)
    _mount(str(scratch), str(target), None, MS_BIND | MS_REC, None)


def _drop_capabilities() -> None:
    for cap in range(64):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # fails quietly past the last capability
    header = (ctypes.c_uint32 * 2)(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    _check(_libc.capget(header, data), "capget")
    _check(
        _libc.prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED, 0, 0, 0), "securebits"
    )
    data = (ctypes.c_uint32 * 6)()
    _check(_libc.capset(header, data), "capset")


def _isolate(protect: list[str], state_dir: Path, uid: int) -> str:
    if os.geteuid() == 0:
        try:
            _check(_libc.unshare(CLONE_NEWNS), "unshare")
        except OSError:
            # Root without CAP_SYS_ADMIN (a container, say): the next level down, as a non-root
            # harness would get it. The state folder was made for the worker uid; take it back.
            os.chown(state_dir, os.getuid(), os.getgid())
            return _isolate_in_user_namespace(protect)
        return _isolate_as_root(protect, state_dir, uid)
    return _isolate_in_user_namespace(protect)


def _isolate_as_root(protect: list[str], state_dir: Path, uid: int) -> str:
    """In a fresh mount namespace (already unshared): cover, expose the interpreter, drop root."""
    interpreter_prefix = Path(os.path.realpath(sys.executable)).parent.parent
    _mount(None, "/", None, MS_REC | MS_PRIVATE, None)
    _expose_interpreter(interpreter_prefix, state_dir.parent / f".{state_dir.name}-python")
    for path in protect:
        if os.path.isdir(path):
            _cover(path)
    # No set-uid program (su, mount, umount…) can hand root back once the uid is dropped.
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    os.setgroups([])
    os.setgid(NOBODY)
    # A uid of its own (not plain nobody): workers of other arms cannot read its folder.
    os.setuid(uid)
    return "unprivileged-user+mount-namespace"


def _isolate_in_user_namespace(protect: list[str]) -> str:
    """The covering mounts in a new user namespace, every capability dropped; else nothing."""
    uid, gid = os.getuid(), os.getgid()
    try:
        _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare")
    except OSError:
        return "process"
    Path("/proc/self/setgroups").write_text("deny")
    Path("/proc/self/uid_map").write_text(f"0 {uid} 1")
    Path("/proc/self/gid_map").write_text(f"0 {gid} 1")
    _mount(None, "/", None, MS_REC | MS_PRIVATE, None)
    for path in protect:
        if os.path.isdir(path):
            _cover(path)
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    _drop_capabilities()
    return "user+mount-namespace"


def main() -> None:
    """Isolate, then replace this process with the worker."""
    config = json.loads(sys.argv[1])
    state_dir = Path(config["state_dir"])
    level = "process"
    if config.get("isolate", True):
        level = _isolate(list(config["protect"]), state_dir, int(config.get("uid", NOBODY)))
    os.chdir(state_dir)
    env = dict(config["env"])
    env.update({k: os.environ[k] for k in config.get("env_from_parent", ()) if k in os.environ})
    env["DRIFT_ISOLATION"] = level
    os.execve(sys.executable, [sys.executable, "-m", "drift_pipeline.memory._worker"], env)


if __name__ == "__main__":
    main()
