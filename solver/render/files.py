"""Files `plan` writes (`--save`, `--chart`): checked before any work, written atomically, with normal permissions.

- **Checked first.** The target must be a regular file or a new file in an existing, writable folder: a missing
  folder, a read-only one, a folder given as the path (or any path ending in a slash, which names a folder whether
  or not it exists), a device (`/dev/full`), or a read-only file (mode 0444: the rename would replace it, which its
  owner said not to) is refused with one line before the solve starts, not after it as a traceback.
- **Atomic.** The content goes to a temporary file in the same folder, which is then renamed over the target, so
  a reader never sees half a plan and two concurrent saves leave one whole file. A symlink at the target is
  replaced by the file (the rename replaces the link, not what it points to).
- **Permissions.** A new file gets the mode any new file gets (0666 less the umask); an existing file keeps its
  mode. (`tempfile.mkstemp` would make every saved plan 0600.)
- **Leftovers.** A run killed between creating and renaming its temporary file leaves `.<name>.<pid>.tmp`; the
  next save to the same target removes those whose process is gone.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ..errors import InputError

TMP_SUFFIX = ".tmp"


def check_target(path: str, option: str) -> Path:
    """The path to write, or one `InputError` naming `option` (e.g. `--save`) if it cannot be written."""
    target = Path(path)
    origin = f"{option} {path}"
    if path.strip() == "":
        raise InputError("expected a file path", origin=origin)
    if path.endswith(("/", os.sep)):
        raise InputError("ends with a slash: a folder; give a file path such as plan.json", origin=origin)
    folder = target.parent if str(target.parent) else Path(".")
    try:
        st = target.stat()
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise InputError(f"cannot use this path: {exc.strerror or exc}", origin=origin) from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise InputError("is a folder; give a file path such as plan.json", origin=origin)
        if not stat.S_ISREG(st.st_mode):
            raise InputError("is not a regular file (a device, FIFO or socket); give a file path", origin=origin)
        if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
            raise InputError("is read-only (no write permission on the file): not replaced; make it writable or "
                             "save elsewhere", origin=origin)
    if not folder.is_dir():
        raise InputError(f"folder {folder} does not exist", origin=origin)
    _probe(folder, origin)
    return target


def _probe(folder: Path, origin: str) -> None:
    """Create and remove a file in `folder`: the only test of writability that also holds for root on a read-only
    file system (where `os.access` says yes)."""
    probe = folder / f".plan-probe.{os.getpid()}{TMP_SUFFIX}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        probe.unlink(missing_ok=True)
        return
    except OSError as exc:
        raise InputError(f"folder {folder} is not writable ({exc.strerror or exc})", origin=origin) from None
    os.close(fd)
    probe.unlink(missing_ok=True)


def _mode_for(target: Path) -> int:
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _clean_leftovers(target: Path) -> None:
    folder = target.parent if str(target.parent) else Path(".")
    prefix = f".{target.name}."
    for p in folder.glob(f"{prefix}*{TMP_SUFFIX}"):
        pid_text = p.name[len(prefix):-len(TMP_SUFFIX)]
        if not pid_text.isdigit() or int(pid_text) == os.getpid():
            continue
        try:
            os.kill(int(pid_text), 0)
        except ProcessLookupError:
            p.unlink(missing_ok=True)
        except OSError:
            continue


def write_atomic(path: str, text: str, option: str = "--save") -> None:
    """Write `text` to `path` (see module docstring); I/O failures are one `InputError` naming `option`."""
    target = check_target(path, option)
    _clean_leftovers(target)
    tmp = target.with_name(f".{target.name}.{os.getpid()}{TMP_SUFFIX}")
    data = text.encode("utf-8")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _mode_for(target))
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        msg = "disk full" if exc.errno == errno.ENOSPC else (exc.strerror or str(exc))
        raise InputError(f"cannot write: {msg}", origin=f"{option} {path}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
