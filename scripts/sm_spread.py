#!/usr/bin/env python3
"""Per-SM loop-end offsets from timeline dumps (bench TIMELINE_DUMP=1 output: lines `cta LABEL C sm S entry E loop L
out O`, one block of CTAs per timed launch). For each launch, every CTA's loop end minus the launch's median; then per
SM the mean over launches, and how much of the spread the SM explains (perf-notes step 158).
Usage: sm_spread.py DUMP..."""
import collections
import re
import statistics as st
import sys


def launches(paths):
    for p in paths:
        cur = None
        for line in open(p):
            m = re.match(r"cta (.+?)\s+(\d+) sm\s+(-?\d+) entry\s+(\S+) loop\s+(\S+) out\s+(\S+)", line)
            if not m:
                continue
            c = int(m.group(2))
            if cur is None or c == 0:
                if cur:
                    yield cur
                cur = {}
            cur[c] = (int(m.group(3)), float(m.group(5)))
        if cur:
            yield cur


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    by_sm, by_cta = collections.defaultdict(list), collections.defaultdict(list)
    n = 0
    for d in launches(sys.argv[1:]):
        n += 1
        med = st.median(v[1] for v in d.values() if v[1] > 0)
        for c, (sm, loop) in d.items():
            if loop > 0:
                by_sm[sm].append(loop - med)
                by_cta[c].append(loop - med)
    allv = [x for v in by_sm.values() for x in v]
    for name, by in (("SM", by_sm), ("CTA", by_cta)):
        means = [st.mean(v) for v in by.values()]
        print(f"{n} launches; by {name}: variance {st.pvariance(allv):.3f}, of the {name} means {st.pvariance(means):.3f}")
    means = {sm: st.mean(v) for sm, v in by_sm.items()}
    keys = sorted(means)
    print("per SM, mean loop end minus the launch median (us):")
    for i in range(0, len(keys), 12):
        print(" ".join(f"{k:3d}:{means[k]:+.1f}" for k in keys[i:i + 12]))


if __name__ == "__main__":
    main()
