"""Hands a run's table files to its child (see read_rules.py): the child may read neither
the artifact store nor any other path a table came from, so the worker puts each file in
the child's read-only inputs directory and links it from scratch under the file's own
name and under `<table name><ext>`, so that `pd.read_csv("sales.csv")` works.

A hard link shares the artifact's inode: a child able to write it would change the store.
So the worker hard-links only where Landlock confines the child (`link=True`: the kernel
refuses writes below the inputs directory whatever the code does); elsewhere it copies
(0400), since the audit hook alone is not a boundary. A copy of a 100 MB table took about
25 ms here, paid by the worker before the child gets the request.
"""

import errno
import os
import shutil

import read_rules


def _safe_name(name):
    return bool(name) and "/" not in name and "\0" not in name and not name.startswith(".")


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
    if not _safe_name(name):
        return
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
        if not _safe_name(file_name):
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
        _alias(scratch, file_name, target)
        extension = os.path.splitext(file_name)[1] or ".csv"
        _alias(scratch, name if name.endswith(extension) else name + extension, target)
    return placed, errors


def remove_run_dirs(scratch):
    """A run's scratch directory and its inputs directory."""
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.rmtree(read_rules.inputs_dir(scratch), ignore_errors=True)
