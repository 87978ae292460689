#!/bin/bash
# hair3, session 14 (issue 18): the hair stand-in's 1x1 GEMM pairs
# (shaders/gemm_chain.comp, TFLITE_GLES_X_FUSE_GEMM_PAIRS: ENet's expansion +
# residual + PRELU and the next projection in one dispatch) on the NVIDIA
# device machine, from the repository root after
#   DIR=.devbuild source bench/device_env.sh
# with this branch's library in build/ and the session's base library in
# .devbuild/base/ (BASE_LIB overrides it):
#   bash bench/device_hair3.sh
# 1. bench/conv_sweep.py --shader gemm_chain (GPU timer queries per
#    dispatch, variants in one process, invokes interleaved): the pairs'
#    tile (TFLITE_GLES_X_GEMM_PAIR_TILE=WG_ROWS/LOCAL_X) forced for all, and
#    shapes compiled in (TFLITE_GLES_SPECIALIZE_SHAPES), fp32 and fp16;
#    tables in $OUT/hair3-sweep.txt.
# 2. Which models fuse pairs on this GPU (gemm_chain dispatches per model).
# 3. bench/options_ab.py (wall of set_tensor + invoke + get_tensor, one
#    process, 300 interleaved invokes): pairs on / off, fp32 and fp16, with
#    the outputs' largest difference.
# 4. run_bench.py base / new (ours fp32 + fp16) on the stand-in, its builtin
#    twin and MobileNet v1 1.0, and LiteRT GPU's row of the stand-ins once.
# 2-4 in $OUT/hair3-rb.txt. Under 100 s; the decisive lines are last.
# (The first call's version, with gemm.comp tile sweeps: commit c70005b.)
source "$(dirname "$0")/device_common.sh"
HAIR=build/models/hair_segmentation_512.tflite
python3 tools/build_standins.py build/models hair_segmentation_512 \
  hair_segmentation_512_builtin mobilenet_v1_1.0_224 > /tmp/hair3-standins.txt 2>&1
P=env.TFLITE_GLES_X_FUSE_GEMM_PAIRS
T=env.TFLITE_GLES_X_GEMM_PAIR_TILE
SWEEP=$OUT/hair3-sweep.txt RB=$OUT/hair3-rb.txt
# sweep TITLE PRECISION_OPTIONS LIMIT VARIANT...: conv_sweep.py's table of the
# pairs' dispatches appended to $SWEEP, each variant's options after the
# precision's; its timeout ends the rounds early and the tables of those done
# are printed.
sweep() {
  local title=$1 opts=$2 limit=$3 v vs=()
  shift 3
  for v in "$@"; do
    local vname=${v%%:*} rest=${v#*:}
    vs+=(--variant "$vname:${opts}${opts:+${rest:+,}}$rest")
  done
  echo "== $title" >> "$SWEEP"
  timeout "$limit" python3 bench/conv_sweep.py --model "$HAIR" --shader gemm_chain \
    --rounds 20 --per-round 4 "${vs[@]}" 2>&1 | grep -v "^INFO\|^WARNING" >> "$SWEEP"
}
# spec: shapes compiled in (every program: the pairs' loops get constant trip
# counts the compiler can unroll; the other dispatches change too, so read
# the gemm_chain rows).
S=env.TFLITE_GLES_SPECIALIZE_SHAPES=1
PT=("rule:" "spec:$S" "8x256:$T=8/256" "16x256:$T=16/256" "32x256:$T=32/256"
    "64x256:$T=64/256" "8x128:$T=8/128" "16x128:$T=16/128" "32x512:$T=32/512"
    "64x512:$T=64/512" "spec16x128:$S,$T=16/128" "spec32x256:$S,$T=32/256")
sweep "pair tiles fp32" "" 11 "${PT[@]}"
sweep "pair tiles fp16" "$F16" 10 "${PT[@]}"
echo "== gemm_chain dispatches / all dispatches per model (fp32)" >> "$RB"
TFLITE_GLES_LIB=$NEW_LIB timeout 12 python3 - "$M" build/models >> "$RB" 2>/dev/null <<'PY'
import glob, sys
sys.path.insert(0, "tests/python"); sys.path.insert(0, "bench")
import gles_testing as gt
from bench_worker import make_inputs
for m in sorted(glob.glob(sys.argv[1] + "/*.tflite")) + sorted(glob.glob(sys.argv[2] + "/*.tflite")):
    d = gt.make_delegate({"enable_profiling": "true"})
    it = gt.interpreter(m, d)
    it.allocate_tensors()
    det = it.get_input_details()
    for x, v in zip(det, make_inputs([(q["shape"], q["dtype"]) for q in det], seed=1)):
        it.set_tensor(x["index"], v)
    it.invoke()
    shaders = [e["shader"] for e in gt.profile(d)]
    print(f"{m.split('/')[-1]}: {shaders.count('gemm_chain')} / {len(shaders)}", flush=True)
    del it
PY
echo "== options_ab, hair stand-in (ms; max diff vs the first variant)" >> "$RB"
TFLITE_GLES_LIB=$NEW_LIB timeout 12 python3 bench/options_ab.py --model "$HAIR" --iterations 300 \
  --variant fp32: --variant "fp32-nopairs:$P=0" --variant "fp16:$F16" \
  --variant "fp16-nopairs:$F16,$P=0" 2>&1 | grep -E "^\|" >> "$RB"
device_rounds "$RB" 18 "base new" --standin hair_segmentation_512 \
  --standin hair_segmentation_512_builtin --standin mobilenet_v1_1.0_224
device_litert_gpu "$RB" 8 --standin hair_segmentation_512 --standin hair_segmentation_512_builtin
grep -E "^(==|\| (sum|invoke|layer))" "$SWEEP"
cat "$RB"
