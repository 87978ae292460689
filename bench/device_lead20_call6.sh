DIR=.devbuild source bench/device_env.sh && R0=$OUT
R=env.TFLITE_GLES_X_PROFILE_REPEAT=20 H=precision_loss_allowed=true O=env.TFLITE_GLES_X_CONV_UP2=0
LEAD20_PARTS=sweep LEAD20_LAYERS="@3 @272" LEAD20_V32="new: off:$O new2: off2:$O newrep:$R" LEAD20_V16="h_new:$H h_off:$H,$O h_new2:$H h_off2:$H,$O" OUT=$R0/sweep bash bench/device_lead20.sh > $R0/sweep.txt 2>&1
tail -14 $R0/sweep.txt | cut -c1-600
source bench/device_common.sh
for r in base new base2 new2; do
  echo "== $r" >> $R0/hair.md
  TFLITE_GLES_LIB=$(device_lib $r) timeout 100 python3 bench/run_bench.py --standin hair_segmentation_512 --standin hair_segmentation_512_builtin --model $M/style_transfer_f16_384.tflite --backends gles_fp32,gles_fp16,litert_gpu --iterations 200 --max-seconds 2 --out-dir /tmp/rb-$r --name rb 2>&1 | grep "^|" >> $R0/hair.md
done
cat $R0/hair.md
