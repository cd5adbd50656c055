"""Hands a run's table files to its child (see read_rules.py): the child may read neither
the artifact store nor any other path a table came from, so the worker puts each file in
the child's read-only inputs directory (a hard link, or a copy across file systems) and
links it from scratch under the file's own name and under `<table name><ext>`, so that
`pd.read_csv("sales.csv")` works. A hard link is safe there: the child cannot write
below its inputs directory (Landlock, and the audit hook resolves symlinks).
"""

import errno
import os
import shutil

import read_rules


def _safe_name(name):
    return bool(name) and "/" not in name and "\0" not in name and not name.startswith(".")


def _place(uri, target):
    try:
        os.link(uri, target)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
            raise
        shutil.copyfile(uri, target)


def _alias(scratch, name, target):
    if not _safe_name(name):
        return
    try:
        os.symlink(target, os.path.join(scratch, name))
    except FileExistsError:
        pass  # two tables of the same name: the first keeps it


def hand_over(scratch, tables):
    """`tables`: [{name, uri}]. Returns ({uri: path the child reads}, {uri: error})."""
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
            _place(uri, target)
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
