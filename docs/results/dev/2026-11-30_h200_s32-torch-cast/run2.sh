cd carry/s32
for m in 1 8; do ncu --metrics gpu__time_duration.sum ./bin/cast_probe $m > $OUT/probe-m$m.txt 2>&1; done
ncu --metrics gpu__time_duration.sum -k regex:unrolled_elementwise python3 torch_cast.py > $OUT/torch-cast.txt 2>&1
for m in 1 8; do ncu --metrics gpu__time_duration.sum ./bin/cast_probe $m > $OUT/probe2-m$m.txt 2>&1; done
ncu --metrics gpu__time_duration.sum -k regex:unrolled_elementwise python3 torch_cast.py > $OUT/torch-cast2.txt 2>&1
for f in $OUT/*.txt; do echo "== $f"; grep -E "^  void|^  _Z|^  [a-z]|duration" $f | sed -E 's/\(int.*//; s/^ +//' | paste - - | awk '{print $1, $NF}' | cut -c1-120; done
