"""Hands a run's table files to its child (see read_rules.py): the child may read neither
the artifact store nor any other path a table came from, so the interpreter puts each file in
the child's read-only inputs directory and links it from scratch under the file's own
name and under `<table name><ext>`, so that `pd.read_csv("sales.csv")` works.

A hard link shares the artifact's inode: a child able to write it would change the store.
So the interpreter hard-links only where Landlock confines the child (`link=True`: the kernel
refuses writes below the inputs directory whatever the code does); elsewhere it copies
(0400), since the audit hook alone is not a boundary. A copy of a 100 MB table took about
25 ms here, paid by the interpreter before the child gets the request.

The other way, the tables a run leaves are files in its scratch directory, where the code
may have put anything under their names: `table_file_problem` checks each one without
blocking or following a link before the interpreter names it to Node.

Imports runner (and so pandas): import this only after hardening.enter_empty_netns().
"""

import errno
import os
import re
import shutil
import stat

import read_rules
import runner

# The only names runner.py gives the table files it writes back (`_export_tables`).
TABLE_FILE_NAME = re.compile(r"_tableminds_table_[0-9]{1,3}\.csv")
# A table file written back that is bigger than this is refused (the children's
# RLIMIT_FSIZE keeps their files below it anyway).
MAX_TABLE_FILE_BYTES = 64 * 1024 * 1024


def _place(uri, target, link):
    if link:
        try:
            os.link(uri, target)
            return
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
                raise
    shutil.copyfile(uri, target, follow_symlinks=False)
    os.chmod(target, 0o400)


def _alias(scratch, name, target):
    try:
        os.symlink(target, os.path.join(scratch, name))
    except FileExistsError:
        pass  # two tables of the same name: the first keeps it


def hand_over(scratch, tables, link=False):
    """`tables`: [{name, uri}]; `link`: hard links allowed (the child is under Landlock).
    Returns ({uri: path the child reads}, {uri: error})."""
    inputs = read_rules.inputs_dir(scratch)
    placed = {}
    errors = {}
    for index, table in enumerate(tables):
        uri, name = str(table["uri"]), str(table["name"])
        if uri in placed or uri in errors:
            continue
        file_name = os.path.basename(uri)
        if not runner.safe_file_name(file_name):
            file_name = f"table-{index}"
        target = os.path.join(inputs, file_name)
        if os.path.lexists(target):
            target = os.path.join(inputs, f"{index}-{file_name}")
        try:
            _place(uri, target, link)
        except OSError as exc:
            errors[uri] = exc
            continue
        placed[uri] = target
        for alias in runner.table_file_aliases(name, file_name):
            _alias(scratch, alias, target)
    return placed, errors


def remove_run_dirs(scratch):
    """A run's scratch directory and its inputs directory."""
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.rmtree(read_rules.inputs_dir(scratch), ignore_errors=True)


# --- the table files a run writes back -------------------------------------------------------

_NONBLOCKING_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def _kind(mode):
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def table_file_problem(scratch, file_name, max_bytes, names=TABLE_FILE_NAME):
    """Why the table file `file_name` in `scratch` cannot be taken (None: it can). It is
    opened without following a symlink and without blocking (a FIFO would otherwise wait
    for a writer), then checked through the open descriptor: a regular file with one link,
    of at most `max_bytes`. Node checks again when it reads it (local.ts). `names`: the
    names the runner gives such files (a figure's are figures.FIGURE_FILE_NAME)."""
    if not isinstance(file_name, str) or not names.fullmatch(file_name):
        return "its file name is not one the runner gives"
    try:
        fd = os.open(os.path.join(scratch, file_name), _NONBLOCKING_READ)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "its file is a symbolic link"
        return f"its file cannot be opened ({os.strerror(exc.errno) if exc.errno else exc})"
    try:
        info = os.fstat(fd)
    finally:
        os.close(fd)
    if not stat.S_ISREG(info.st_mode):
        return f"its file is {_kind(info.st_mode)}, not a regular file"
    if info.st_nlink != 1:
        return f"its file has {info.st_nlink} links (a hard link to another file?)"
    if info.st_size > max_bytes:
        return f"its file has {info.st_size} bytes, more than the {max_bytes} allowed"
    return None
