#!/usr/bin/env python3
"""Writes the function-by-function coverage table of docs/user-guide.md.

Implemented: every function of the binding description, runtime/binding/functions.txt
(tests/binding/check_symbols.py keeps it equal to what libskein exports). Not implemented:
docs/mpi-missing.txt, less what the description now has. The table goes between the
markers <!-- coverage:begin --> and <!-- coverage:end --> of the user guide."""
import sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root / "runtime/binding"))
import mpibind  # noqa: E402

funcs = [f for f in mpibind.load(root / "runtime/binding/functions.txt") if f.name.startswith("MPI_")]
have = sorted(f.name[4:] for f in funcs)
removed = {f.name[4:] for f in funcs if f.removed}
removed |= {"Keyval_create", "Keyval_free", "Attr_put", "Attr_get", "Attr_delete"}
mpi4 = {"Comm_idup_with_info", "Info_get_string", "Isendrecv", "Isendrecv_replace"}
missing = []
for line in (root / "docs/mpi-missing.txt").read_text().splitlines():
    if line.strip() and not line.startswith("#"):
        std, family, name = line.split()
        if name not in have:
            missing.append((name, std, family))

rows = ["| Function | Standard | Status |", "|---|---|---|"]
for name in have:
    std = "MPI-1 (removed in 3.0)" if name in removed else "4.0" if name in mpi4 else "3.1"
    rows.append(f"| `MPI_{name}` | {std} | implemented |")
for name, std, family in sorted(missing):
    rows.append(f"| `MPI_{name}` | {std} | not implemented ({family}) |")
table = "\n".join(rows)

guide = root / "docs/user-guide.md"
text = guide.read_text()
begin, end = "<!-- coverage:begin -->", "<!-- coverage:end -->"
if begin not in text:
    sys.exit("docs/user-guide.md has no coverage markers")
pre, rest = text.split(begin, 1)
_, post = rest.split(end, 1)
guide.write_text(pre + begin + "\n" + table + "\n" + end + post)
print(f"{len(have)} implemented, {len(missing)} listed as missing")
