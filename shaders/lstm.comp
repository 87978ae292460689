#version 310 es
// LSTM (basic kernel: one 4-gate cell) in two passes over [batch, channels]
// tensors (PHWC4 with H = W = 1, so element (b, slice) is at b * S + slice).
//
// MODE_GATES: activation_temp = concat_temp x weights^T + bias.
//   Bindings: 0 = activation_temp [B, 4D], 1 = concat_temp [B, IN_C],
//   2 = weights packed per (output slice, input slice) as 4 vec4 rows (one
//   per output lane), 3 = bias, one vec4 per output slice. Padded lanes of
//   concat_temp and of the packed weights are zero, so the dots are exact.
// MODE_CELL: the gate nonlinearities and the state update.
//   Bindings: 0 = activation [B, D], 1 = state [B, D],
//   2 = activation_temp [B, 4D], 3 = prev_state [B, D].
//   Gate order in activation_temp: input, candidate, forget, output.
//
// @axis MODE_GATES MODE_CELL
// @const LOCAL_X=64 LOCAL_Y=1 LOCAL_Z=1 TOTAL=64
// @const IN_S=2 OUT_S=4 DEPTH=16 TEMP_S=16

layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = LOCAL_Z) in;

#if defined(MODE_GATES)
TENSOR_OUT(activation_temp, 0, ActivationTemp);
TENSOR_IN(concat_temp, 1, ConcatTemp);
TENSOR_IN(weights, 2, Weights);
TENSOR_IN(bias, 3, Bias);

void main() {
  int i = int(global_index());
  if (i >= TOTAL) return;
  int slice = i % OUT_S;
  int b = i / OUT_S;
  vec4 sum = LOAD(bias, slice);
  int row = slice * IN_S * 4;
  for (int k = 0; k < IN_S; ++k, row += 4) {
    vec4 x = LOAD(concat_temp, b * IN_S + k);
    sum += vec4(dot(x, LOAD(weights, row)), dot(x, LOAD(weights, row + 1)),
                dot(x, LOAD(weights, row + 2)), dot(x, LOAD(weights, row + 3)));
  }
  STORE(activation_temp, i, zero_padded(sum, slice, 4 * DEPTH));
}

#else
TENSOR_OUT(activation, 0, Activation);
TENSOR_OUT(state, 1, State);
TENSOR_IN(activation_temp, 2, ActivationTemp);
TENSOR_IN(prev_state, 3, PrevState);

float temp_at(int b, int channel) {
  return LOAD(activation_temp, b * TEMP_S + channel / 4)[channel % 4];
}

// elementwise_ops.glsl's (the preamble's), as activate() uses them.
vec4 sigmoid(vec4 v) { return ew_sigmoid(v); }
vec4 safe_tanh(vec4 v) { return ew_tanh(v); }

void main() {
  int i = int(global_index());
  if (i >= TOTAL) return;
  int slice = i % OUT_S;
  int b = i / OUT_S;
  vec4 input_gate = vec4(0.0), candidate = vec4(0.0);
  vec4 forget_gate = vec4(0.0), output_gate = vec4(0.0);
  for (int lane = 0; lane < 4; ++lane) {
    int c = slice * 4 + lane;
    if (c >= DEPTH) break;
    input_gate[lane] = temp_at(b, c);
    candidate[lane] = temp_at(b, DEPTH + c);
    forget_gate[lane] = temp_at(b, 2 * DEPTH + c);
    output_gate[lane] = temp_at(b, 3 * DEPTH + c);
  }
  vec4 new_state = sigmoid(input_gate) * safe_tanh(candidate) +
                   sigmoid(forget_gate) * LOAD(prev_state, i);
  vec4 new_activation = sigmoid(output_gate) * safe_tanh(new_state);
  STORE(state, i, zero_padded(new_state, slice, DEPTH));
  STORE(activation, i, zero_padded(new_activation, slice, DEPTH));
}
#endif
