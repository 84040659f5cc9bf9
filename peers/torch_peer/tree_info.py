"""Which commit of the repository the peer script is, and whether it was changed.

The tool stamps `git describe --always --dirty --abbrev=40` into its binary at
build time (meson.build's vcs_tag); a Python script runs from source, so it asks
git at run time. Where the tree travelled without its .git (a device machine
gets a copy of the files only), the build's stamp stands in: `meson` writes
<build>/peers/tree_stamp.json with the describe string and the SHA-256 of every
file under peers/, and a file that differs from its stamped hash at run time
makes the run dirty, since the code that ran is then not the stamped commit.
"""

import hashlib
import json
import os
import subprocess

DIRTY_SUFFIX = "-dirty"
UNKNOWN = "unknown"
# meson.build passes the same arguments to vcs_tag.
DESCRIBE = ["describe", "--always", "--dirty", "--abbrev=40", "--match=NoTagWanted"]


def git_describe(repo_root):
    """The describe string, or None where git or the repository is absent."""
    try:
        result = subprocess.run(["git", "-C", repo_root, *DESCRIBE], capture_output=True,
                                text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    text = result.stdout.strip()
    return text if result.returncode == 0 and text else None


def commit_and_dirty(describe):
    """app/tool_info.cpp current_tool_info: strip '-dirty'; unknown is dirty."""
    dirty = len(describe) > len(DIRTY_SUFFIX) and describe.endswith(DIRTY_SUFFIX)
    commit = describe[: -len(DIRTY_SUFFIX)] if dirty else describe
    if commit in ("", UNKNOWN):
        return UNKNOWN, True
    return commit, dirty


def peer_file_hashes(repo_root):
    """SHA-256 of every file under peers/ (caches left out), keyed by repo path."""
    hashes = {}
    peers = os.path.join(repo_root, "peers")
    for folder, subfolders, files in os.walk(peers):
        subfolders[:] = sorted(s for s in subfolders if s != "__pycache__")
        for name in sorted(files):
            if name.endswith(".pyc"):
                continue
            path = os.path.join(folder, name)
            with open(path, "rb") as file:
                digest = hashlib.sha256(file.read()).hexdigest()
            hashes[os.path.relpath(path, repo_root).replace(os.sep, "/")] = digest
    return hashes


def write_stamp(path, repo_root):
    describe = git_describe(repo_root) or UNKNOWN + DIRTY_SUFFIX
    text = json.dumps({"git_describe": describe, "sha256": peer_file_hashes(repo_root)},
                      indent=2, sort_keys=True) + "\n"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    temporary = f"{path}.tmp.{os.getpid()}"
    with open(temporary, "w", encoding="utf-8") as file:
        file.write(text)
    os.replace(temporary, path)


def tree_state(repo_root, stamp_path=None):
    """(git_commit, git_dirty, how): from the stamp where one is given (the
    build that ran names its tree; a repository copied beside it may be stale),
    else from git where it answers, else unknown (and so dirty). `how` is one
    line for the log."""
    if not stamp_path:
        describe = git_describe(repo_root)
        if describe is not None:
            commit, dirty = commit_and_dirty(describe)
            return commit, dirty, f"git describe: {describe}"
        return UNKNOWN, True, "no git repository and no --tree-stamp: commit unknown"
    try:
        with open(stamp_path, encoding="utf-8") as file:
            stamp = json.load(file)
        describe, stamped = stamp["git_describe"], stamp["sha256"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        return UNKNOWN, True, f"--tree-stamp {stamp_path} unusable ({error}): commit unknown"
    commit, dirty = commit_and_dirty(describe)
    current = peer_file_hashes(repo_root)
    changed = sorted(path for path in set(stamped) | set(current)
                     if stamped.get(path) != current.get(path))
    if changed:
        return commit, True, (f"stamp {stamp_path} says {describe}, but these files changed "
                              f"since: {', '.join(changed)}")
    return commit, dirty, f"stamp {stamp_path}: {describe}"
