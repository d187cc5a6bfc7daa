#!/usr/bin/env python3
"""Writes the function-by-function coverage table of docs/user-guide.md.

Implemented: every SKN_DECL(ret, Name, ...) of runtime/include/mpi.h (MPI_Name and
PMPI_Name are defined). Not implemented: docs/mpi-missing.txt. The table goes between the
markers <!-- coverage:begin --> and <!-- coverage:end --> of the user guide. When the
binding description (issue 7) lands, read the names from it instead of mpi.h."""
import re
import sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
header = (root / "runtime/include/mpi.h").read_text()
have = sorted(set(re.findall(r"SKN_DECL\([^,]+,\s*([A-Za-z0-9_]+)", header)))
removed = set()
m = re.search(r"#ifndef SKEIN_MPI_STRICT(.*?)#endif", header, re.S)
if m:
    removed = set(re.findall(r"SKN_DECL\([^,]+,\s*([A-Za-z0-9_]+)", m.group(1)))
removed |= {"Keyval_create", "Keyval_free", "Attr_put", "Attr_get", "Attr_delete"}
mpi4 = {"Comm_idup_with_info", "Info_get_string"}
missing = []
for line in (root / "docs/mpi-missing.txt").read_text().splitlines():
    if line.strip() and not line.startswith("#"):
        std, family, name = line.split()
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
