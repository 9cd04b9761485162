"""Ways to damage a source file: the edits the fuzz tests make to backend files.

``mutate(data, ops)`` applies edit operations (delete, duplicate or replace a line,
insert or replace a token, insert bytes, truncate) to a file's bytes; ``TOKENS``
are the fragments inserted. Used by tests/analysis/test_fuzz.py (random edits of a
tiny tree) and test_real_edits.py (edits of real release files).
"""

from __future__ import annotations

TOKENS = [
    "(", ")", "[", "]", "{", "}", ":", ",", ".", "\\", "'''", '"', "#", "\t", "    ",
    "return", "True", "False", "None", "class ", "def ", "if ", "else:", "lambda",
    "MultipleOf(", "DeviceCapability(", "AttentionType.", "major", "==", ">=", "in",
    "AttentionBackendEnum.", "use_mla", "yield", "await", "\x00", "\ufeff", "é",
    "# -*- coding: latin-1 -*-", "# -*- coding: bogus -*-", "..", "import *",
]  # fmt: skip


def mutate(data: bytes, ops: list[tuple]) -> bytes:
    for kind, *args in ops:
        lines = data.split(b"\n")
        if kind == "delete":
            del lines[args[0] % len(lines)]
        elif kind == "duplicate":
            i = args[0] % len(lines)
            lines.insert(i, lines[i])
        elif kind == "replace_line":
            lines[args[0] % len(lines)] = lines[args[1] % len(lines)]
        if kind in ("delete", "duplicate", "replace_line"):
            data = b"\n".join(lines)
            continue
        pos = args[0] % (len(data) + 1)
        if kind == "token":
            data = data[:pos] + args[1].encode() + data[pos:]
        elif kind == "retoken":  # replace the word at pos
            end = pos
            while end < len(data) and data[end : end + 1].isalnum():
                end += 1
            data = data[:pos] + args[1].encode() + data[max(end, pos + 1) :]
        elif kind == "bytes":
            data = data[:pos] + args[1] + data[pos:]
        else:
            data = data[:pos]
    return data
