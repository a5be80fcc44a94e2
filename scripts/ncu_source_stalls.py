"""Warp-state samples per SASS instruction from ncu's source page (perf-notes step 138):
    ncu -i REPORT --page source --csv --print-source sass > SRC.csv
    python3 scripts/ncu_source_stalls.py SRC.csv
prints, per kernel in the file, the share of each stall reason and the 25 instructions with the most samples."""
import csv, sys, io, collections
def parse(path):
    txt = open(path).read()
    parts = txt.split('"Kernel Name",')[1:]
    out = []
    for p in parts:
        name, rest = p.split('\n', 1)
        rows = list(csv.reader(io.StringIO(rest)))
        hdr = rows[0]; data = [r for r in rows[1:] if len(r) == len(hdr)]
        out.append((name, hdr, data))
    return out
for path in sys.argv[1:]:
    for name, hdr, data in parse(path):
        i_src = hdr.index("Source"); i_s = hdr.index("Warp Stall Sampling (All Samples)"); i_ex = hdr.index("Instructions Executed")
        stall_cols = [i for i, h in enumerate(hdr) if h.startswith("stall_") and "Not Issued" not in h]
        tot = collections.Counter(); n = 0
        for r in data:
            s = int(r[i_s] or 0); n += s
            for i in stall_cols:
                v = r[i]
                if v and v != '0': tot[hdr[i]] += int(float(v))
        print(f"== {path} {name[:140]}\n samples {n}")
        print("  " + ", ".join(f"{k} {v/n*100:.1f}%" for k, v in tot.most_common(12)))
        top = sorted(data, key=lambda r: -int(r[i_s] or 0))[:25]
        for r in top:
            s = int(r[i_s] or 0)
            reasons = sorted(((int(float(r[i])), hdr[i]) for i in stall_cols if r[i] and r[i] != '0'), reverse=True)[:3]
            print(f"  {s:6d} {s/n*100:5.1f}% {r[i_src][:60]:60s} ex={r[i_ex]:>7s} {reasons}")
