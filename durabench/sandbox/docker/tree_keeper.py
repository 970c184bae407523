"""What one read of a directory tree keeps, and the notes of what its limits left out.

One set of rules for both ways a Docker sandbox's tree is read (an archive streamed by
the daemon, or a volume walked on this host), so a tree reads the same either way:
files in the order met, the same :class:`~durabench.sandbox.limits.ReadLimits`, the
same words for what was left out. The host walk weighs a file's size before the bytes
read so far (it reads nothing it leaves out), the archive read the other way round (a
skipped file still streams past).
"""

from __future__ import annotations

from durabench.sandbox.limits import ReadLimits, TreeRead, human_bytes
from durabench.wording import counted

__all__ = ["PATH_LIMIT", "TreeKeeper"]

PATH_LIMIT = 4096
"""The longest path the daemon's ``docker-tar`` reads (Linux's ``PATH_MAX``), counted
with the container's root on the host before it: a file past it is not in the archive."""

_MAX_CUT_NOTES = 20
"""Notes kept per read; the rest are counted in one."""


def _shown(rel: str) -> str:
    """A file name for a note: any bytes (the agent chose them) as printable, cut short.

    A long name is cut in the middle: its start and its file's own name are kept.
    """
    raw = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    text = raw.encode("unicode_escape").decode("ascii") if not raw.isprintable() else raw
    return text if len(text) <= 200 else text[:100] + "…" + text[-100:]


class TreeKeeper:
    """The files of one tree read as they are met, within its limits."""

    def __init__(self, path: str, limits: ReadLimits) -> None:
        self.path = path
        self.limits = limits
        self.files: dict[str, bytes] = {}
        self.kept = 0
        self._cut: list[str] = []

    def full(self) -> bool:
        """Whether a file more is past ``max_files`` (said): the read stops."""
        if len(self.files) < self.limits.max_files:
            return False
        self._cut.append(
            f"{self.path}: more than {counted(self.limits.max_files, 'file')}; the rest left out"
        )
        return True

    def past_stream(self, rel: str, size: int, read_so_far: int) -> bool:
        """Whether ``size`` bytes more go past ``max_stream_bytes`` (said): the read stops."""
        cap = self.limits.max_stream_bytes
        if read_so_far + size <= cap:
            return False
        self._cut.append(
            f"{self.path}/{_shown(rel)}: {human_bytes(size)}, past what is read of "
            f"{self.path} ({human_bytes(cap)}); reading stopped there, the files after it "
            "left out"
        )
        return True

    def too_large(self, rel: str, size: int) -> bool:
        """Whether the file is over the per-file or the total cap (said): it is left out."""
        per_file, total = self.limits.max_file_bytes, self.limits.max_total_bytes
        if per_file is not None and size > per_file:
            self._cut.append(
                f"{self.path}/{_shown(rel)}: {human_bytes(size)}, over the "
                f"{human_bytes(per_file)} per file, left out"
            )
            return True
        if self.kept + size > total:
            self._cut.append(
                f"{self.path}/{_shown(rel)}: left out, {human_bytes(total)} already kept"
            )
            return True
        return False

    def keep(self, rel: str, data: bytes) -> None:
        """Keep a file's bytes."""
        self.files[rel] = data
        self.kept += len(data)

    def keep_link(self, rel: str, target: str) -> bool:
        """Keep a later name of a file met first as ``target`` (relative too), its bytes.

        A hard link's name is a file of the tree like any other (it may be the name the
        task reads), counted against the limits; a link to a file left out is left out
        with it (said). ``False``: a file more is past ``max_files``, the read stops.
        """
        if self.full():
            return False
        data = self.files.get(target)
        if data is None:
            self._cut.append(
                f"{self.path}/{_shown(rel)}: a second name of {self.path}/{_shown(target)}, "
                "left out with it"
            )
        elif not self.too_large(rel, len(data)):
            self.keep(rel, data)
        return True

    def unreached(self, rel: str) -> None:
        """Say that a name below the tree is past the daemon's path limit: not read."""
        self._cut.append(
            f"{self.path}/{_shown(rel)}: its path is past what the daemon reads "
            f"({PATH_LIMIT:,} bytes with the container's root), left out with anything below it"
        )

    def unlisted(self, dirs: int) -> None:
        """Say that directories at the path limit could not be listed for what they hold."""
        self._cut.append(
            f"{self.path}: {dirs} directories at the daemon's path limit could not be "
            "listed; files below them may be left out"
        )

    def stream_ended(self) -> None:
        """Say that the stream's cap stopped the read in the middle of a file."""
        self._cut.append(
            f"{self.path}: reading stopped after {human_bytes(self.limits.max_stream_bytes)} "
            "(large or sparse files); files after that point left out"
        )

    def result(self) -> TreeRead:
        """The files kept and the notes, folded past twenty."""
        cut = self._cut
        if len(cut) > _MAX_CUT_NOTES:
            more = len(cut) - _MAX_CUT_NOTES + 1
            cut = [*cut[: _MAX_CUT_NOTES - 1], f"and {more} more files left out"]
        return TreeRead(self.files, tuple(cut))
