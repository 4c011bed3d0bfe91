"""Launcher that isolates a backend worker before any backend code runs.

Run as ``python -m drift_pipeline.memory._sandbox CONFIG_JSON``. It is harness code: it sets up
the strongest isolation this process can get, then ``exec``s the worker, so the backend starts in
a process that cannot see the generated world even if it searches the whole filesystem. Each
worker forked by the worker template (:mod:`._worker_template`) takes the same steps
(:func:`isolate_worker`); this launcher starts workers where no template can.

Levels, strongest first (the one that held is reported to the harness and recorded):

- ``unprivileged-user+mount-namespace`` (harness runs as root): a private mount namespace in
  which every protected path (the data root) is covered by an empty read-only tmpfs, each folder
  the worker could not enter on the way to the interpreter, the environment or an import folder
  (a 0700 home such as ``/root``) is replaced by a tmpfs exposing only those, read-only, then
  the process drops to an unprivileged uid of its own for good (``no_new_privs`` set, so no
  set-uid program can raise it again), so it can neither read the real paths nor unmount.
- ``user+mount-namespace`` (not root, user namespaces allowed): the same covering mounts in a new
  user namespace, with every capability dropped and ``no_new_privs`` set so they cannot be undone.
- ``process``: a separate process with a scrubbed environment and its own folder only.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MNT_DETACH = 2
MS_REC = 16384
MS_PRIVATE = 1 << 18
PR_SET_NO_NEW_PRIVS = 38
PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_SECUREBITS = 28
SECBIT_NOROOT = 1
SECBIT_NOROOT_LOCKED = 2
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
NOBODY = 65534

# The interpreter's own symbols, which include the C library's: ``find_library("c")`` would
# run ``ldconfig -p`` in every worker this module starts.
_libc = ctypes.CDLL(None, use_errno=True)


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


def _traversable(path: Path) -> bool:
    """Whether a user who is neither owner nor group (the worker) may enter ``path``."""
    return bool(path.stat().st_mode & stat.S_IXOTH)


def _needed_paths() -> list[Path]:
    """What the worker must reach: the interpreter, the environment and every import folder.

    The worker inherits the harness's import path, so this is exactly where the harness itself
    imports the package, its dependencies and any plugin module from; nothing else.
    """
    candidates = [
        Path(sys.prefix),
        Path(sys.exec_prefix),
        Path(sys.base_prefix),
        Path(sys.base_exec_prefix),
        Path(os.path.realpath(sys.executable)).parent.parent,
        Path(sys.executable).parent,
        *(Path(entry) for entry in sys.path if entry and os.path.isdir(entry)),
    ]
    real = {Path(os.path.realpath(path)) for path in candidates if os.path.isdir(path)}
    # Keep the outermost of nested folders: one bind mount carries everything below it.
    return sorted(path for path in real if not any(other in path.parents for other in real))


def _hidden_roots(needed: list[Path]) -> list[Path]:
    """The outermost folders on the way to ``needed`` that the worker cannot enter."""
    hidden: set[Path] = set()
    for path in needed:
        for ancestor in [*reversed(path.parents), path]:
            if ancestor != Path("/") and not _traversable(ancestor):
                hidden.add(ancestor)
                break
    return sorted(path for path in hidden if not any(other in path.parents for other in hidden))


def _exposed_entries(path: Path, depth: int = 0) -> list[Path]:
    """``path``, or when the worker could not enter it itself, its entries one by one."""
    if _traversable(path) or depth > 3:
        return [path]
    entries: list[Path] = []
    for entry in sorted(path.iterdir()):
        entries += _exposed_entries(entry, depth + 1) if entry.is_dir() else [entry]
    return entries


def _expose_needed(scratch: Path) -> None:
    """Make the interpreter, environment and import folders reachable, and nothing beside them.

    Each folder that hides one of them (a 0700 home, say) is replaced by a tmpfs in which the
    way down to each needed folder is recreated (mode 755) and the folder itself is bound back
    read-only from its real location. The rest of the hidden folder (other projects, keys,
    a data root beside the checkout) does not exist in the worker's view. A needed folder that
    is itself 0700 (a checkout made by ``mktemp -d``) is recreated the same way, its entries
    bound one by one.
    """
    needed = _needed_paths()
    hidden = _hidden_roots(needed)
    if not hidden:
        return
    exposed = [
        entry
        for path in needed
        if any(h == path or h in path.parents for h in hidden)
        for entry in _exposed_entries(path)
    ]
    scratch.mkdir(parents=True, exist_ok=True)
    staged: list[tuple[Path, Path]] = []
    for index, source in enumerate(exposed):
        # Bound aside first: once the tmpfs covers the hidden folder, the source is gone.
        holder = scratch / str(index)
        if source.is_dir():
            holder.mkdir()
        else:
            holder.touch()
        _mount(str(source), str(holder), None, MS_BIND | MS_REC, None)
        staged.append((holder, source))
    for root in hidden:
        _mount("tmpfs", str(root), "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=755")
    for holder, target in staged:
        root = next(h for h in hidden if h == target or h in target.parents)
        for parent in reversed([target, *target.parents] if holder.is_dir() else target.parents):
            if parent == root or root in parent.parents:
                parent.mkdir(exist_ok=True)
                os.chmod(parent, 0o755)
        if not holder.is_dir():
            target.touch()
        _mount(str(holder), str(target), None, MS_BIND | MS_REC, None)
        _mount(None, str(target), None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID, None)
    # The holders are the same folders again, beside the worker's own: take them away.
    for holder, _ in staged:
        _check(_libc.umount2(str(holder).encode(), MNT_DETACH), f"umount {holder}")
    for root in hidden:
        # The recreated ways down were writable for setting up; the worker gets them read-only.
        _mount(None, str(root), None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, None)
    shutil.rmtree(scratch, ignore_errors=True)


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
    _mount(None, "/", None, MS_REC | MS_PRIVATE, None)
    _expose_needed(state_dir.parent / f".{state_dir.name}-python")
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


def _unreachable(executable: str) -> str | None:
    """What the isolated worker cannot reach of what it needs to start, if anything."""
    package = Path(__file__).resolve().parent.parent / "__init__.py"
    if not os.access(executable, os.X_OK):
        return f"the interpreter {executable}"
    if not os.access(package, os.R_OK):
        return f"the drift_pipeline package at {package.parent}"
    return None


def _refuse(reason: str) -> None:
    """Answer the harness's first request with the reason the worker cannot start, and stop."""
    line = {"ok": False, "ms": 0.0, "isolation_error": True, "error": reason}
    os.write(1, json.dumps(line).encode() + b"\n")
    sys.exit(3)


def arm_parent_death() -> None:
    """Have the kernel kill this process when the thread that started it ends."""
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "parent-death signal")


def interpreter() -> str:
    """The venv's own interpreter path (where pyvenv.cfg is found), its folders resolved."""
    return os.path.join(
        os.path.realpath(os.path.dirname(sys.executable)), os.path.basename(sys.executable)
    )


def isolate_worker(
    config: dict[str, Any], parent: int, secrets: Mapping[str, str]
) -> dict[str, str]:
    """Every step between a fresh process and the worker; returns the worker's environment.

    Isolates this process as ``config`` says, checks that the worker can still reach the
    interpreter and the package, arms the parent-death signal against ``parent`` (the process
    that must outlive it) and enters the worker's folder. ``secrets`` holds the values of the
    variables named in ``config["env_from_parent"]``. A step that fails answers the harness's
    first request with the reason (see :func:`_refuse`) and exits; a parent already gone
    exits quietly.
    """
    # A launcher whose harness is gone stops at once, before it makes any folder (the worker's
    # folder of a harness killed outright is removed by nobody). Armed again below, once the
    # uid is dropped.
    arm_parent_death()
    if os.getppid() != parent:
        sys.exit(0)
    state_dir = Path(config["state_dir"])
    executable = interpreter()
    level = "process"
    if config.get("isolate", True):
        try:
            level = _isolate(list(config["protect"]), state_dir, int(config.get("uid", NOBODY)))
        except OSError as error:
            _refuse(f"{error}")
        except Exception as error:  # the launcher's stderr goes nowhere: say it on the pipe
            _refuse(f"{type(error).__name__}: {error}")
    missing = _unreachable(executable)
    if missing is not None:
        _refuse(f"the worker ({level}, uid {os.getuid()}) cannot reach {missing}")
    # A worker must not outlive its harness: one blocked inside a backend call never reads the
    # end of its input, so the kernel kills it when the harness goes, however it goes. Armed
    # after the uid is dropped (a change of credentials clears it) and kept across the exec.
    arm_parent_death()
    if os.getppid() != parent:
        sys.exit(0)  # the harness ended before the signal was armed
    os.chdir(state_dir)
    env = dict(config["env"])
    env.update({k: secrets[k] for k in config.get("env_from_parent", ()) if k in secrets})
    env["DRIFT_ISOLATION"] = level
    return env


def main() -> None:
    """Isolate, then replace this process with the worker."""
    config = json.loads(sys.argv[1])
    env = isolate_worker(config, int(config.get("parent", os.getppid())), os.environ)
    executable = interpreter()
    os.execve(executable, [executable, "-m", "drift_pipeline.memory._worker"], env)


if __name__ == "__main__":
    main()
