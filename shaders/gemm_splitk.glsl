// gemm.comp's split-K kernel (SPLIT_K: few rows, FC layers, a classifier's
// logits) with its prologues and the softmax epilogue, included by
// gemm.comp's include line (egl/shader_source.h) inside #if defined(SPLIT_K);
// gemm.comp declares the bindings, shared arrays, @const and @uniform names.
//
// MEAN_PROLOGUE (SPLIT_K only; FuseMeanIntoGemm, delegate/passes/dw_fusion.h):
// A is the mean over MEAN_PIXELS pixels of a PHWC4 map (global average
// pooling before a classifier): binding 1 is that map, and the workgroup first averages the
// TILE_ROWS x DEPTH_STEPS vec4s its rows read into `mean_a` ([row][step];
// each invocation walks the pixels of some), then one barrier, then the
// GEMM reads A from there. Every workgroup along the slices repeats the
// means: MobileNet's 49 x 256 vec4s, against a dispatch of its own.
//
// SOFTMAX_EPILOGUE (SPLIT_K only, ROWS == TILE_ROWS <= 4; delegate/
// dw_fusion.h, FuseSoftmaxIntoGemm): a softmax over each row's OUT_C
// outputs follows, in the last workgroup to finish. Every workgroup stores
// its raw results into `logits` (the GEMM's own output tensor, read-write
// binding 0) instead of out0, makes them visible (memoryBarrierBuffer, then
// a barrier so all of its invocations have), and one invocation counts the
// workgroup on `arrivals` (read-write binding 1). The workgroup that counts
// last learns it through shared memory and computes the softmax of every
// row, exp(SOFTMAX_BETA * (x - max)) / sum, as channel_normalize.comp does,
// with all its invocations: each takes every (LOCAL_X * K_PARTS)-th slice,
// one row per vec4 lane, and reads the logits once: its maximum and sum
// (rescaled as the maximum grows, "online softmax") meet the others' in
// shared memory (each invocation's pair, then 16 groups', then everyone
// merges those), and its first slice stays in registers for the write. It
// writes out0 and zeroes the counter for the next run. The
// others only pass the barriers (barrier() may not sit in control flow).
// No workgroup waits for another, so this needs no forward-progress
// guarantee between workgroups.

#if defined(SOFTMAX_EPILOGUE)
// Where row `row`, slice `slice` of the output lies (as store_result).
int output_index(int row, int slice) {
  return ((row / OUT_HW) * OUT_S + slice) * OUT_HW + row % OUT_HW;
}

// Merges the softmax statistics of two sets of values (per lane: the
// maximum m and the sum of exp(SOFTMAX_BETA * (x - m))) into (m, s). An
// empty set (sum 0, maximum kLowest) adds nothing: selected out, not
// multiplied, since its rescale factor may be infinite when BETA < 0.
void merge_softmax(inout vec4 m, inout vec4 s, vec4 m2, vec4 s2) {
  vec4 merged = max(m, m2);
  s = mix(vec4(0.0), s * exp((m - merged) * SOFTMAX_BETA), greaterThan(s, vec4(0.0))) +
      mix(vec4(0.0), s2 * exp((m2 - merged) * SOFTMAX_BETA), greaterThan(s2, vec4(0.0)));
  m = merged;
}
#endif

void main() {
  int tx = int(gl_LocalInvocationID.x);
  int part = int(gl_LocalInvocationID.y);
  int slice = int(gl_WorkGroupID.x) * LOCAL_X + tx;  // < WEIGHT_SLICES
  int first_row = int(gl_WorkGroupID.y) * TILE_ROWS;
  int base[TILE_ROWS];
  vec4 acc[TILE_ROWS];
  for (int p = 0; p < TILE_ROWS; ++p) {
    base[p] = input_base(min(first_row + p, ROWS - 1));
    acc[p] = vec4(0.0);
  }
#if defined(FC_PROLOGUE)
  const int kThreads = LOCAL_X * K_PARTS;
  int fc_thread = part * LOCAL_X + tx;
#if defined(FC1_MEAN)
  int chunks = max(1, kThreads / FC1_DEPTH_STEPS);
  for (int s = fc_thread / chunks; s < FC1_DEPTH_STEPS; s += kThreads / chunks) {
    vec4 sum = vec4(0.0);
    int map = s * FC1_MEAN_PIXELS;
    for (int k = fc_thread % chunks; k < FC1_MEAN_PIXELS; k += chunks) sum += LOAD(in0, map + k);
    scratch[s * chunks + fc_thread % chunks] = sum;
  }
  memoryBarrierShared();
  barrier();
  for (int s = fc_thread; s < FC1_DEPTH_STEPS; s += kThreads) {
    vec4 sum = vec4(0.0);
    for (int c = 0; c < chunks; ++c) sum += scratch[s * chunks + c];
    fc_x[s] = sum * (1.0 / float(FC1_MEAN_PIXELS));
  }
  memoryBarrierShared();
  barrier();
#endif
  int hidden = DEPTH_STEPS;
  int parts1 = max(1, kThreads / hidden);
  int fc_part = fc_thread / hidden;
  if (fc_part < parts1) {
    for (int h = fc_thread - fc_part * hidden; h < hidden; h += kThreads) {
      vec4 acc1 = vec4(0.0);
      for (int d = fc_part; d < FC1_DEPTH_STEPS; d += parts1) {
        int w = (d * FC1_WEIGHT_SLICES + h) * 4;  // columns: input lanes
        acc1 += mat4(LOAD(fc1_weights, w), LOAD(fc1_weights, w + 1), LOAD(fc1_weights, w + 2),
                     LOAD(fc1_weights, w + 3)) * FC1_INPUT(d);
      }
      scratch[fc_part * hidden + h] = acc1;
    }
  }
  memoryBarrierShared();
  barrier();
  for (int h = fc_thread; h < hidden; h += kThreads) {
    vec4 sum = LOAD(fc1_bias, h);
    for (int k = 0; k < parts1; ++k) sum += scratch[k * hidden + h];
    mean_a[h] = zero_padded(FC1_EPILOGUE(FC1_ACT(sum)), h, FC1_OUT_C);
  }
  memoryBarrierShared();
  barrier();
#elif defined(MEAN_PROLOGUE)
  {
    int depth_steps = DEPTH_STEPS;
    int pixels = MEAN_PIXELS;
    float scale = 1.0 / float(pixels);
    for (int i = part * LOCAL_X + tx; i < TILE_ROWS * depth_steps; i += LOCAL_X * K_PARTS) {
      int p = i / depth_steps;
      int d = i - p * depth_steps;
      int map = min(first_row + p, ROWS - 1) * MEAN_BATCH_STRIDE + d * pixels;
      vec4 sum = vec4(0.0);
      for (int k = 0; k < pixels; ++k) sum += LOAD(in0, map + k);
      mean_a[i] = MEAN_EPILOGUE(sum * scale);
    }
  }
  memoryBarrierShared();
  barrier();
#endif
  for (int d = part; d < DEPTH_STEPS; d += K_PARTS) {
    int w = (d * WEIGHT_SLICES + slice) * 4;
    vec4 w0 = LOAD(weights, w);
    vec4 w1 = LOAD(weights, w + 1);
    vec4 w2 = LOAD(weights, w + 2);
    vec4 w3 = LOAD(weights, w + 3);
    for (int p = 0; p < TILE_ROWS; ++p) {
#if defined(FC_PROLOGUE)
      vec4 x = mean_a[d];
#elif defined(MEAN_PROLOGUE)
      vec4 x = mean_a[p * DEPTH_STEPS + d];
#else
      vec4 x = LOAD(in0, base[p] + d * DEPTH_STRIDE);
#endif
      acc[p] += w0 * x.x + w1 * x.y + w2 * x.z + w3 * x.w;
    }
  }
#if K_PARTS > 1
  for (int p = 0; p < TILE_ROWS; ++p) {
    scratch[(part * LOCAL_X + tx) * TILE_ROWS + p] = acc[p];
  }
  memoryBarrierShared();
  barrier();
  for (int p = part; p < TILE_ROWS; p += K_PARTS) {
    vec4 sum = vec4(0.0);
    for (int q = 0; q < K_PARTS; ++q) {
      sum += scratch[(q * LOCAL_X + tx) * TILE_ROWS + p];
    }
    store_result(first_row + p, slice, sum);
  }
#else
  // One part: no partial sums to meet (SHARED_VEC4 is a token 1).
  for (int p = 0; p < TILE_ROWS; ++p) store_result(first_row + p, slice, acc[p]);
#endif
#if defined(SOFTMAX_EPILOGUE)
  // The softmax, in the last workgroup to get here (see the header).
  int thread = part * LOCAL_X + tx;
  memoryBarrierBuffer();
  barrier();
  if (thread == 0) {
    uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_NumWorkGroups.z;
    last_group = atomicAdd(arrivals, 1u) == groups - 1u ? 1u : 0u;
  }
  memoryBarrierShared();
  barrier();
  int slices = last_group != 0u ? OUT_S : 0;
  memoryBarrierBuffer();
  // One pass over the logits: each invocation's (max, sum) of its slices,
  // lane p for row p; its first slice stays in registers for the write
  // pass (MobileNet's 251 slices: every invocation's only one).
  vec4 first_slice[TILE_ROWS];
  vec4 part_max = vec4(kLowest);
  vec4 part_sum = vec4(0.0);
  for (int p = 0; p < TILE_ROWS; ++p) first_slice[p] = vec4(0.0);
  for (int s = thread; s < slices; s += SOFTMAX_THREADS) {
    bvec4 real = lessThan(ivec4(s * 4) + ivec4(0, 1, 2, 3), ivec4(OUT_C));
    for (int p = 0; p < TILE_ROWS; ++p) {
      vec4 v = LOAD_LOGITS(output_index(p, s));
      if (s == thread) first_slice[p] = v;
      vec4 x = mix(vec4(kLowest), v, real);
      float m = max(max(x.x, x.y), max(x.z, x.w));
      float e = dot(mix(vec4(0.0), exp((v - vec4(m)) * SOFTMAX_BETA), real), vec4(1.0));
      vec4 slice_max = vec4(kLowest);
      vec4 slice_sum = vec4(0.0);
      slice_max[p] = m;
      slice_sum[p] = e;
      merge_softmax(part_max, part_sum, slice_max, slice_sum);
    }
  }
  softmax_max[thread] = part_max;
  softmax_sum[thread] = part_sum;
  memoryBarrierShared();
  barrier();
  if (thread < SOFTMAX_GROUPS) {
    vec4 m = vec4(kLowest);
    vec4 sum = vec4(0.0);
    for (int k = thread * SOFTMAX_SPAN; k < min((thread + 1) * SOFTMAX_SPAN, SOFTMAX_THREADS); ++k) {
      merge_softmax(m, sum, softmax_max[k], softmax_sum[k]);
    }
    softmax_max_groups[thread] = m;
    softmax_sum_groups[thread] = sum;
  }
  memoryBarrierShared();
  barrier();
  vec4 row_max = vec4(kLowest);
  vec4 row_sum = vec4(0.0);
  for (int g = 0; g < SOFTMAX_GROUPS; ++g) {
    merge_softmax(row_max, row_sum, softmax_max_groups[g], softmax_sum_groups[g]);
  }
  vec4 scale = vec4(1.0) / row_sum;  // lanes past the rows divide by zero, unused
  for (int s = thread; s < slices; s += SOFTMAX_THREADS) {
    for (int p = 0; p < TILE_ROWS; ++p) {
      int index = output_index(p, s);
      vec4 v = s == thread ? first_slice[p] : LOAD_LOGITS(index);
      vec4 e = exp((v - vec4(row_max[p])) * SOFTMAX_BETA);
      STORE(out0, index, zero_padded(SOFTMAX_OUT_EPILOGUE(e * scale[p]), s, OUT_C));
    }
  }
  // Every workgroup has counted itself: the next run starts from zero.
  if (slices > 0 && thread == 0) arrivals = 0u;
#endif
}
