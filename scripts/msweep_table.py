#!/usr/bin/env python3
"""The judge's m sweeps (`solgemm-judge --loads none --m 1 2 ... --json F`) as one markdown table per layer: each m's
speedup over cuBLAS, its family, and a mark where the 95% interval lies wholly below 1 (slower than cuBLAS).
With two sets of files (BEFORE... -- AFTER...) the table shows both.
  python3 scripts/msweep_table.py sweep-qkv_gate.json ... [-- after/sweep-qkv_gate.json ...]"""
import json
import sys


def load(paths):
    out = {}
    for p in paths:
        d = json.load(open(p))
        for s in d["shapes"]:
            if s.get("timed"):
                out[(s["layer"], s["m"])] = s
    return out


def cell(s):
    lo, hi = s["speedup_ci"]
    mark = " **<1**" if hi < 1.0 else ""
    return f"{s['speedup']:.3f}{mark}"


def main(argv):
    if "--" in argv:
        i = argv.index("--")
        sets = [load(argv[:i]), load(argv[i + 1:])]
    else:
        sets = [load(argv)]
    layers = sorted({k[0] for st in sets for k in st})
    for layer in layers:
        ms = sorted({k[1] for st in sets for k in st if k[0] == layer})
        head = "| m | family | speedup |" if len(sets) == 1 else "| m | family (after) | speedup before | speedup after |"
        print(f"\n### {layer}\n\n{head}\n|" + "---|" * (head.count("|") - 1))
        slow = [[] for _ in sets]
        for m in ms:
            row = [str(m)]
            fam = next((st[(layer, m)]["plan"].split(" ")[0] for st in reversed(sets) if (layer, m) in st), "")
            row.append(fam)
            for j, st in enumerate(sets):
                s = st.get((layer, m))
                row.append(cell(s) if s else "")
                if s and s["speedup_ci"][1] < 1.0:
                    slow[j].append(m)
            print("| " + " | ".join(row) + " |")
        for j, sl in enumerate(slow):
            tag = "" if len(sets) == 1 else (" (before)" if j == 0 else " (after)")
            print(f"\nslower than cuBLAS (95% interval below 1){tag}: {sl if sl else 'none'}")


if __name__ == "__main__":
    main(sys.argv[1:])
