#!/usr/bin/env python3
"""Reads skinny_bench's per-warp tail traces (SKINNY_TAIL=<dir>, kernel knob kTailTrace; perf-notes step 120).

File: int32 ctas, split_k, compute warps, reps; then per rep ctas x 8 timeline stamps (skinny_family.cuh stamp():
0 entry, 7 = (SM + 1) << 16 | flags) and ctas x 64 slots x 4 kinds of tail stamps (tail_stamp(): slot w < 32 kinds
0..3 = before / after the CTA barrier after the main loop, after the partials' barrier, after the reduced
partial's; slot 32 + w: kind 3 the warp's own work done, 0 the cluster barrier passed (push tail) or the split-K
arrival seen, 1 the CTA's share received, 2 the outputs stored; slots 60 / 61: warp 0's clock64() at its slot 0 / 32
stamps). Unset stamps are left out. Times in us after the launch's first CTA entry.

Usage: tail_trace.py FILE...   (prints, per file, medians over the reps of per-CTA quantities)
"""
import statistics
import struct
import sys


def load(fn):
    with open(fn, "rb") as f:
        ctas, cs, warps, reps = struct.unpack("4i", f.read(16))
        out = []
        for _ in range(reps):
            tl = struct.unpack(f"{ctas * 8}Q", f.read(ctas * 64))
            tt = struct.unpack(f"{ctas * 256}Q", f.read(ctas * 2048))
            out.append((tl, tt))
    return ctas, cs, warps, out


def q3(v):
    v = sorted(v)
    return (v[0], v[len(v) // 2], v[-1]) if v else (float("nan"),) * 3


def rep_stats(ctas, cs, warps, tl, tt):
    t0 = min(tl[c * 8] for c in range(ctas) if tl[c * 8])
    us = lambda t: (t - t0) * 1e-3 if t else None
    tail = lambda c, slot, kind: us(tt[(c * 64 + slot) * 4 + kind])
    sm = [(tl[c * 8 + 7] >> 16) - 1 for c in range(ctas)]
    per_sm = {}
    for s in sm:
        per_sm[s] = per_sm.get(s, 0) + 1
    rows = []
    for c in range(ctas):
        nw = max((w for w in range(32) if tail(c, w, 0) is not None), default=-1) + 1
        arrive = [tail(c, w, 0) for w in range(nw)]
        after1 = [x for x in (tail(c, w, 1) for w in range(nw)) if x is not None]
        done = [tail(c, 32 + w, 3) for w in range(nw)]
        comp_done = [d for d in done[:warps] if d is not None]
        comp_arr = [a for a in arrive[:warps] if a is not None]
        last_w = max(range(nw), key=lambda w: arrive[w])
        role = "compute" if last_w < warps else "producer" if last_w == warps else "exception"
        mx = lambda v: max((x for x in v if x is not None), default=None)
        row = dict(
            sm_ctas=per_sm[sm[c]],
            landed=max(comp_done) if comp_done else None,
            comp_end=max(comp_arr), w0_end=arrive[0], last_role=role,
            prod=done[warps] if warps < nw else None, exc=done[warps + 1] if warps + 1 < nw else None,
            arr_max=max(arrive), rel1_min=min(after1) if after1 else None, rel1_max=max(after1) if after1 else None,
            b2=mx(tail(c, w, 2) for w in range(nw)), b3=mx(tail(c, w, 3) for w in range(nw)),
            clw=mx(tail(c, 32 + w, 0) for w in range(nw)),
            recv=mx(tail(c, 32 + w, 1) for w in range(nw)),
            end=mx(tail(c, 32 + w, 2) for w in range(nw)),
        )
        g0, g1 = tt[(c * 64 + 0) * 4 + 0], tt[(c * 64 + 32) * 4 + 2]
        k0, k1 = tt[(c * 64 + 60) * 4 + 0], tt[(c * 64 + 61) * 4 + 2]
        row["mhz"] = (k1 - k0) / ((g1 - g0) * 1e-3) if g0 and g1 and k0 and k1 and g1 > g0 else None
        rows.append(row)
    # cluster / split group of each CTA: consecutive blockIdx.x (cs of them) in one row block (grid.y = token chunks)
    for c, row in enumerate(rows):
        g = [rows[c - c % cs + j] for j in range(cs)]
        row["grp_arr"] = max(x["arr_max"] for x in g)
        b3 = [x["b3"] for x in g if x["b3"] is not None]
        row["grp_b3"] = max(b3) if b3 else None
    return rows


def main():
    for fn in sys.argv[1:]:
        ctas, cs, warps, reps = load(fn)
        agg = {}
        for tl, tt in reps:
            rows = rep_stats(ctas, cs, warps, tl, tt)
            def put(k, vals):
                vals = [v for v in vals if v is not None]
                if vals:
                    agg.setdefault(k, []).append(q3(vals))
            put("last stage landed (max over compute warps)", [r["landed"] for r in rows])
            put("compute warps done (max)", [r["comp_end"] for r in rows])
            put("warp 0 done", [r["w0_end"] for r in rows])
            put("producer's copies issued", [r["prod"] for r in rows])
            put("exception warp done", [r["exc"] for r in rows])
            put("last arrival at barrier 1", [r["arr_max"] for r in rows])
            put("barrier 1 passed, first warp", [r["rel1_min"] for r in rows])
            put("barrier 1 passed, last warp", [r["rel1_max"] for r in rows])
            d = lambda a, b: a - b if a is not None and b is not None else None
            put("  (first warp past b1) - (last arrival)", [d(r["rel1_min"], r["arr_max"]) for r in rows])
            put("partials' barrier passed", [r["b2"] for r in rows])
            put("reduced partial (barrier 3)", [r["b3"] for r in rows])
            put("  b3 - last arrival at b1", [d(r["b3"], r["arr_max"]) for r in rows])
            put("landed -> compute done", [d(r["comp_end"], r["landed"]) for r in rows])
            put("cluster barrier passed (push) / split arrival seen", [r["clw"] for r in rows])
            put("  minus the group's last b1 arrival", [d(r["clw"], r["grp_arr"]) for r in rows])
            put("  minus the group's last b3", [d(r["clw"], r["grp_b3"]) for r in rows])
            put("shares received", [r["recv"] for r in rows])
            put("  received - the group's last b3", [d(r["recv"], r["grp_b3"]) for r in rows])
            put("  received - the group's last loop end", [d(r["recv"], r["grp_arr"]) for r in rows])
            put("outputs stored", [r["end"] for r in rows])
            put("  stored - own b3", [d(r["end"], r["b3"]) for r in rows])
            put("  stored - the group's last b3", [d(r["end"], r["grp_b3"]) for r in rows])
            put("  stored - the group's last loop end", [d(r["end"], r["grp_arr"]) for r in rows])
            put("SM clock, MHz (warp 0, loop end -> stored)", [r["mhz"] for r in rows])
            for n in (1, 2, 3):
                put(f"landed, CTAs on SMs holding {n}", [r["landed"] for r in rows if r["sm_ctas"] == n])
            roles = {}
            for r in rows:
                roles[r["last_role"]] = roles.get(r["last_role"], 0) + 1
            agg.setdefault("roles", []).append(roles)
        print(f"== {fn}: {ctas} CTAs, split {cs}, {warps} compute warps, {len(reps)} cold launches "
              "(us after the first entry; median over launches of min / median / max over CTAs)")
        for k, v in agg.items():
            if k == "roles":
                continue
            m = [statistics.median(x[j] for x in v) for j in range(3)]
            print(f"  {k:48s} {m[0]:6.2f} {m[1]:6.2f} {m[2]:6.2f}")
        print("  last to arrive at barrier 1 (per launch):", agg["roles"])


if __name__ == "__main__":
    main()
