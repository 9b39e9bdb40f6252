"""The error every user-facing failure raises: one line naming file, field and offset."""

from __future__ import annotations


class NxError(Exception):
    """A clear, expected failure (bad input, missing tool).  The CLI prints it as one line
    and exits with status 2; it never becomes a traceback."""

    def __init__(self, message: str, *, path: str | None = None, field: str | None = None, offset: int | None = None) -> None:
        self.path, self.field, self.offset = path, field, offset
        where = []
        if path:
            where.append(str(path))
        if field:
            where.append(f"field {field}")
        if offset is not None:
            where.append(f"offset {offset:#x}")
        super().__init__((": ".join([", ".join(where), message])) if where else message)
