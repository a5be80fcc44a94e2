#!/usr/bin/env python3
"""Compare the SASS of two builds function by function: which kernels a change left identical.

Why: the cluster kernels are sensitive to code outside their loops (perf-notes step 166: a byte count posted after
the loop instead of before it cost 0.2-0.4 us on every cluster kernel). A change meant for one variant must leave
the others' machine code identical, and this shows it without a GPU:

    python3 scripts/sass_diff.py OLD/build/judge/solgemm-judge build/judge/solgemm-judge
    python3 scripts/sass_diff.py --only skinny OLD.a NEW.a       # functions whose name matches a regex

Each input is anything cuobjdump reads (an executable, a static library, an object, a cubin). Function bodies are
compared after dropping addresses and encodings; anonymous-namespace hashes in names (they follow the build's paths)
are normalised. Exit status: 0 if every compared function is identical, 1 if one differs or exists on one side
only, 2 on a usage or tool error.

cuobjdump is not part of a minimal CUDA toolkit install; `pip download --no-deps nvidia-cuda-cuobjdump` and
unzipping the wheel gives one (nvidia/cu13/bin/cuobjdump). It is looked for in $CUOBJDUMP, on PATH, then in
/usr/local/cuda/bin.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

FUNC = re.compile(r"^\s*Function\s*:\s*(\S+)\s*$")
# /*0120*/   IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28] ;   /* 0x00000a00ff017624 */
INSN = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s*(.*?)\s*;?\s*(/\*.*\*/)?\s*$")
ANON = re.compile(r"_GLOBAL__N__[0-9a-f]{8}_(\d+)_")


def normalise_name(name: str) -> str:
    """_GLOBAL__N__67aff330_9_stream_cu_23605cba13stream_kernel... -> _GLOBAL__N__stream_cu13stream_kernel..."""
    out, pos = [], 0
    for m in ANON.finditer(name):
        if m.start() < pos:
            continue
        n = int(m.group(1))
        file_end = m.end() + n
        tail = re.match(r"_[0-9a-f]{8}", name[file_end:])
        if not tail:
            continue
        out.append(name[pos:m.start()])
        out.append("_GLOBAL__N__" + name[m.end():file_end])
        pos = file_end + tail.end()
    out.append(name[pos:])
    return "".join(out)


def find_cuobjdump(given: str | None) -> str:
    for cand in (given, os.environ.get("CUOBJDUMP"), shutil.which("cuobjdump"), "/usr/local/cuda/bin/cuobjdump"):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    sys.exit("sass_diff: cuobjdump not found (set $CUOBJDUMP or --cuobjdump; `pip download --no-deps "
             "nvidia-cuda-cuobjdump` and unzip the wheel to get one)")


def functions(tool: str, path: str) -> dict[str, list[str]]:
    """name -> instructions (addresses and encodings dropped), for every function of every cubin in path."""
    if not os.path.isfile(path):
        sys.exit(f"sass_diff: {path}: no such file")
    r = subprocess.run([tool, "-sass", path], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"sass_diff: cuobjdump -sass {path} failed: {r.stderr.strip().splitlines()[-1:] or r.returncode}")
    funcs: dict[str, list[str]] = {}
    cur = None
    for line in r.stdout.splitlines():
        m = FUNC.match(line)
        if m:
            name = normalise_name(m.group(1))
            # the same function in two cubins (two translation units): keep both, numbered
            key, i = name, 1
            while key in funcs:
                i += 1
                key = f"{name}#{i}"
            cur = funcs.setdefault(key, [])
            continue
        if cur is None:
            continue
        m = INSN.match(line)
        if m and m.group(1):
            cur.append(re.sub(r"\s+", " ", m.group(1)))
    return funcs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--only", default="", help="compare only functions whose (normalised) name matches this regex")
    ap.add_argument("--cuobjdump", default=None)
    ap.add_argument("--show", type=int, default=0, help="print the first N differing lines of each changed function")
    args = ap.parse_args()
    tool = find_cuobjdump(args.cuobjdump)
    try:
        sel = re.compile(args.only)
    except re.error as e:
        sys.exit(f"sass_diff: --only {args.only!r}: {e}")
    old = {k: v for k, v in functions(tool, args.old).items() if sel.search(k)}
    new = {k: v for k, v in functions(tool, args.new).items() if sel.search(k)}
    if not old and not new:
        sys.exit(f"sass_diff: no function matches {args.only!r} in either input")
    same = sorted(k for k in old.keys() & new.keys() if old[k] == new[k])
    changed = sorted(k for k in old.keys() & new.keys() if old[k] != new[k])
    gone, added = sorted(old.keys() - new.keys()), sorted(new.keys() - old.keys())
    for k in changed:
        a, b = old[k], new[k]
        print(f"changed  {k}  ({len(a)} -> {len(b)} instructions)")
        if args.show:
            shown = 0
            for i in range(max(len(a), len(b))):
                x = a[i] if i < len(a) else "-"
                y = b[i] if i < len(b) else "-"
                if x != y:
                    print(f"    {i:5d}: {x}\n           {y}")
                    shown += 1
                    if shown >= args.show:
                        break
    for k in gone:
        print(f"only old {k}")
    for k in added:
        print(f"only new {k}")
    print(f"sass_diff: {len(same)} identical, {len(changed)} changed, {len(gone)} only in old, {len(added)} only in new")
    return 0 if not (changed or gone or added) else 1


if __name__ == "__main__":
    sys.exit(main())
