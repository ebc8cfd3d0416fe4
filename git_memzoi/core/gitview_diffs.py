"""The content diffs of two commits' trees, as plain data (capture reads git changes through them): a part of
:class:`~git_memzoi.core.gitview_pygit2.Pygit2RepoView`, kept apart so each module stays one concept."""

from __future__ import annotations

from typing import Any

from git_memzoi.core.git_similarity import git_similarity
from git_memzoi.errors import InputError


class TreeDiffs:
    """Tree-to-tree diffs over an open repository: ``_repo`` (a ``pygit2.Repository``) and ``_pygit2`` (the
    module, imported lazily by the view)."""

    _repo: Any
    _pygit2: Any

    def blob_bytes(self, blob_id: str) -> bytes:
        """The content of the blob ``blob_id``."""
        return bytes(self._repo[blob_id].data)

    def tree_diff(
        self, base: str, head: str, *, renames: bool, max_files: int, max_hunks: int, context_lines: int = 3
    ) -> list[dict[str, object]]:
        """The diff of ``base``'s tree to ``head``'s tree (full commit ids) as plain data, one dict per file.

        Each file: ``status`` (added|modified|deleted|renamed|…), ``old_path``/``new_path``, ``old_blob``/
        ``new_blob``, ``old_mode``/``new_mode``, ``binary`` and ``hunks`` (``header``, ``old_start``,
        ``old_lines``, ``new_start``, ``new_lines``, ``lines``: ``(origin, text, old_lineno, new_lineno)``).

        Raises:
            InputError: ``capture_limit_exceeded`` beyond ``max_files`` changed files or ``max_hunks`` hunks
                (checked before any patch text is built past the cap).
        """
        pygit2 = self._pygit2
        old = self._repo[base].peel(pygit2.Tree)
        new = self._repo[head].peel(pygit2.Tree)
        diff = old.diff_to_tree(new, context_lines=context_lines)
        if renames:
            diff.find_similar(flags=pygit2.enums.DiffFind.FIND_RENAMES)
        if len(diff) > max_files:
            raise InputError(f"the range changes more than {max_files} files", "capture_limit_exceeded")
        names = {
            pygit2.enums.DeltaStatus.ADDED: "added",
            pygit2.enums.DeltaStatus.MODIFIED: "modified",
            pygit2.enums.DeltaStatus.DELETED: "deleted",
            pygit2.enums.DeltaStatus.RENAMED: "renamed",
        }
        out: list[dict[str, object]] = []
        hunks_seen = 0
        for patch in diff:
            delta = patch.delta
            hunks = []
            for hunk in patch.hunks:
                hunks_seen += 1
                if hunks_seen > max_hunks:
                    raise InputError(f"the range has more than {max_hunks} hunks", "capture_limit_exceeded")
                hunks.append(
                    {
                        "header": hunk.header.rstrip("\n"),
                        "old_start": hunk.old_start,
                        "old_lines": hunk.old_lines,
                        "new_start": hunk.new_start,
                        "new_lines": hunk.new_lines,
                        "lines": [(ln.origin, ln.content, ln.old_lineno, ln.new_lineno) for ln in hunk.lines],
                    }
                )
            out.append(
                {
                    "status": names.get(delta.status, str(delta.status).rsplit(".", 1)[-1].lower()),
                    "old_path": delta.old_file.path,
                    "new_path": delta.new_file.path,
                    "old_blob": str(delta.old_file.id),
                    "new_blob": str(delta.new_file.id),
                    "old_mode": int(delta.old_file.mode),
                    "new_mode": int(delta.new_file.mode),
                    "binary": bool(delta.is_binary),
                    "hunks": hunks,
                }
            )
        return out

    def renderer_version(self) -> str:
        """The engine behind :meth:`unified_diff`: ``git-libgit2-<libgit2 version>``."""
        return f"git-libgit2-{self._pygit2.LIBGIT2_VERSION}"

    def tree_blob(self, commit: str, path: str) -> bytes | None:
        """The bytes of the regular file ``path`` in ``commit``'s tree, ``None`` when absent or not a blob."""
        tree = self._repo[commit].peel(self._pygit2.Tree)
        try:
            entry = tree[path]
        except (KeyError, ValueError):
            return None
        if int(entry.filemode) not in (0o100644, 0o100755):
            return None
        return bytes(self._repo[entry.id].data)

    def unified_diff(
        self,
        base: str,
        head: str,
        *,
        renames: bool,
        max_files: int,
        max_hunks: int,
        max_bytes: int,
        context_lines: int = 3,
    ) -> tuple[bytes, list[str]]:
        """``git diff --full-index [-M] <base> <head>`` (no colour, no prefix options) rendered in-process.

        Returns (the patch bytes, the sorted changed paths). File order, headers, hunk headers (libgit2's, with
        git's default function context), ``\\ No newline at end of file`` and git's own rename similarity score
        (:mod:`git_memzoi.core.git_similarity`) are as git prints them; renames are paired by libgit2 at git's 50 %
        threshold.

        Raises:
            InputError: ``capture_limit_exceeded`` beyond ``max_files`` files, ``max_hunks`` hunks or
                ``max_bytes`` bytes; ``unsupported_git_change`` for a binary change, a type change (file to
                symlink) or a path git would quote or that holds whitespace.
        """
        pygit2 = self._pygit2
        old = self._repo[base].peel(pygit2.Tree)
        new = self._repo[head].peel(pygit2.Tree)
        diff = old.diff_to_tree(new, flags=pygit2.enums.DiffOption.INDENT_HEURISTIC, context_lines=context_lines)
        if renames:
            diff.find_similar(flags=pygit2.enums.DiffFind.FIND_RENAMES)
        if len(diff) > max_files:
            raise InputError(f"the range changes more than {max_files} files", "capture_limit_exceeded")
        out: list[bytes] = []
        size = hunks_seen = 0
        paths: set[str] = set()
        for patch in diff:
            delta = patch.delta
            status = delta.status_char()
            a, b = delta.old_file, delta.new_file
            for path in {a.path, b.path}:
                if not _plain_path(path):
                    raise InputError("the range holds a path git would quote", "unsupported_git_change")
                paths.add(path)
            if status not in "AMDR" or (status in "MR" and a.mode >> 12 != b.mode >> 12):
                raise InputError(f"the range holds an unsupported change ({status})", "unsupported_git_change")
            text = [f"diff --git a/{a.path} b/{b.path}\n"]
            if status == "A":
                text.append(f"new file mode {b.mode:06o}\n")
            elif status == "D":
                text.append(f"deleted file mode {a.mode:06o}\n")
            elif a.mode != b.mode:
                text.append(f"old mode {a.mode:06o}\nnew mode {b.mode:06o}\n")
            if status == "R":
                blobs = (self.blob_bytes(str(a.id)), self.blob_bytes(str(b.id))) if a.id != b.id else None
                score = git_similarity(*blobs) if blobs else 100
                text.append(f"similarity index {score}%\nrename from {a.path}\nrename to {b.path}\n")
            if a.id != b.id:
                text.append(f"index {a.id}..{b.id}" + (f" {a.mode:06o}\n" if a.mode == b.mode else "\n"))
            if delta.is_binary:
                raise InputError("the range holds a binary change", "unsupported_git_change")
            body = bytearray("".join(text).encode("utf-8"))
            if patch.hunks:
                body += (f"--- a/{a.path}\n" if status != "A" else "--- /dev/null\n").encode("utf-8")
                body += (f"+++ b/{b.path}\n" if status != "D" else "+++ /dev/null\n").encode("utf-8")
            for hunk in patch.hunks:
                hunks_seen += 1
                if hunks_seen > max_hunks:
                    raise InputError(f"the range has more than {max_hunks} hunks", "capture_limit_exceeded")
                body += hunk.header.encode("utf-8")
                for line in hunk.lines:
                    if line.origin in "=><":
                        body += b"\n\\ No newline at end of file\n"
                    else:
                        body += line.origin.encode("ascii") + line.raw_content
            if delta.is_binary:  # libgit2 knows binary-ness for sure only once the patch is built
                raise InputError("the range holds a binary change", "unsupported_git_change")
            size += len(body)
            if size > max_bytes:
                raise InputError(f"the range's diff is larger than {max_bytes} bytes", "capture_limit_exceeded")
            out.append(bytes(body))
        return b"".join(out), sorted(paths)


def _plain_path(path: str) -> bool:
    """True when git prints ``path`` unquoted (core.quotepath), untabbed: printable ASCII but ``"``, ``\\``."""
    return bool(path) and all(33 <= ord(c) < 127 and c not in '"\\' for c in path)
