#!/usr/bin/env python3
"""memory_plot.py PROG < lines "flavour ranks pss_kb": an SVG line plot of total PSS (MiB,
log scale) against ranks, one line per MPI. Used by memory.sh --svg; needs only Python."""
import math
import sys

names = {"skein": "Skein", "mpich": "MPICH", "openmpi": "Open MPI"}
colors = {"skein": "#1b7837", "mpich": "#2166ac", "openmpi": "#b2182b"}
series = {}
for line in sys.stdin:
    f, n, kb = line.split()
    series.setdefault(f, []).append((int(n), int(kb) / 1024.0))
if not series:
    sys.exit("memory_plot.py: no data")
W, H, L, R, T, B = 640, 400, 70, 150, 40, 50
xs = sorted({n for s in series.values() for n, _ in s})
ys = [v for s in series.values() for _, v in s]
y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
if y1 == y0:
    y1 += 1
def px(n):  # log2 ranks
    a, b = math.log2(xs[0]), math.log2(xs[-1])
    return L + (W - L - R) * ((math.log2(n) - a) / (b - a) if b > a else 0.5)
def py(v):
    return T + (H - T - B) * (1 - (math.log10(v) - y0) / (y1 - y0))
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
       f'<rect width="{W}" height="{H}" fill="white"/>',
       f'<text x="{L}" y="20" font-size="14">Total PSS of the job, {sys.argv[1] if len(sys.argv) > 1 else ""} (MiB, log scale)</text>']
for e in range(y0, y1 + 1):
    for m in (1, 2, 5):
        v = m * 10 ** e
        if 10 ** y0 <= v <= 10 ** y1:
            y = py(v)
            out.append(f'<line x1="{L}" x2="{W - R}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
            out.append(f'<text x="{L - 6}" y="{y + 4:.1f}" text-anchor="end">{v:g}</text>')
for n in xs:
    x = px(n)
    out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{T}" y2="{H - B}" stroke="#eee"/>')
    out.append(f'<text x="{x:.1f}" y="{H - B + 16}" text-anchor="middle">{n}</text>')
out.append(f'<text x="{(L + W - R) / 2}" y="{H - 12}" text-anchor="middle">ranks</text>')
for i, (f, pts) in enumerate(sorted(series.items())):
    pts.sort()
    c = colors.get(f, "black")
    path = " ".join(f"{px(n):.1f},{py(v):.1f}" for n, v in pts)
    out.append(f'<polyline points="{path}" fill="none" stroke="{c}" stroke-width="2"/>')
    for n, v in pts:
        out.append(f'<circle cx="{px(n):.1f}" cy="{py(v):.1f}" r="3" fill="{c}"/>')
    out.append(f'<text x="{W - R + 10}" y="{T + 20 + 18 * i}" fill="{c}">{names.get(f, f)}</text>')
out.append("</svg>")
print("\n".join(out))
