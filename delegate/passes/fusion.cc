#include "delegate/passes/fusion.h"

#include "delegate/passes/dispatch_scan.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>

namespace tflite_gles {
namespace {

// The elementwise steps that fuse name their function in
// shaders/elementwise_ops.glsl, the one place their formulas are written
// (shaders/elementwise.comp calls the same functions). Binary steps:
// the function of the consumer's OP_* over operands A and B.
std::optional<std::string> BinaryExpression(const Dispatch& consumer,
                                            const std::string& a,
                                            const std::string& b) {
  static const struct { const char* define; const char* function; } kBinary[] = {
      {"OP_ADD", "ew_add"}, {"OP_SUB", "ew_sub"}, {"OP_MUL", "ew_mul"},
      {"OP_DIV", "ew_div"}, {"OP_MAXIMUM", "ew_maximum"}, {"OP_MINIMUM", "ew_minimum"},
      // Reached only from FuseEpilogues (see EpilogueTakesPrelu): the
      // prologue fusions still refuse PRELU through HasUnfusableBinary.
      {"OP_PRELU", "ew_prelu"}};
  for (const auto& op : kBinary) {
    if (consumer.defines.count(op.define)) {
      return std::string(op.function) + "(" + a + ", " + b + ")";
    }
  }
  return std::nullopt;
}

bool HasUnfusableBinary(const Dispatch& consumer) {
  for (const char* op : {"OP_POW", "OP_PRELU", "OP_LOGICAL_AND"}) {
    if (consumer.defines.count(op)) return true;
  }
  return false;
}

// PRELU folds into its producer's store as a binary step whose operand is
// the alpha tensor (ENet-style models follow nearly every convolution with
// one: 55 of the hair segmentation stand-in's 176 dispatches were PRELUs
// right after a convolution). Alpha is of the output's shape or per
// channel (or a scalar literal), as the operand rules below require of any
// binary step; BinaryExpression keeps the operand order, as for SUB.
bool EpilogueTakesPrelu(const Dispatch& consumer) {
  return consumer.defines.count("OP_PRELU") && !consumer.defines.count("OP_POW") &&
         !consumer.defines.count("OP_LOGICAL_AND");
}

// The unary step (fused activation or unary op) applied to `e`, as
// elementwise.comp's unary_op applies it; `e` is "unchanged" when the
// consumer has none, nullopt when it has one that does not fuse (SQRT and
// RSQRT stay: rare after a convolution).
std::optional<std::string> UnaryExpression(const Dispatch& consumer,
                                           const std::string& e) {
  const auto& d = consumer.defines;
  static const struct { const char* define; const char* function; } kUnary[] = {
      {"ACT_RELU", "ew_relu"},          {"ACT_RELU6", "ew_relu6"},
      {"ACT_RELU_N1_TO_1", "ew_relu_n1_to_1"}, {"OP_RELU_0_TO_1", "ew_relu_0_to_1"},
      {"ACT_TANH", "ew_tanh"},          {"ACT_SIGMOID", "ew_sigmoid"},
      {"OP_HARD_SWISH", "ew_hard_swish"}, {"OP_ABS", "ew_abs"},
      {"OP_NEG", "ew_neg"},             {"OP_SQUARE", "ew_square"},
      {"OP_EXP", "ew_exp"},             {"OP_ELU", "ew_elu"}};
  for (const auto& op : kUnary) {
    if (d.count(op.define)) return std::string(op.function) + "(" + e + ")";
  }
  if (d.count("OP_LEAKY_RELU")) {
    auto alpha = d.find("ALPHA");
    if (alpha == d.end()) return std::nullopt;
    return "ew_leaky_relu(" + e + ", " + alpha->second + ")";
  }
  if (d.count("OP_FAKE_QUANT")) {
    // The quantization simulator (delegate/graph/quantization.h).
    auto scale = d.find("Q_SCALE"), zero = d.find("Q_ROUND_ZERO");
    auto lo = d.find("Q_LO"), hi = d.find("Q_HI");
    if (scale == d.end() || zero == d.end() || lo == d.end() || hi == d.end()) {
      return std::nullopt;
    }
    return "ew_fake_quant(" + e + ", " + scale->second + ", " + zero->second + ", " +
           lo->second + ", " + hi->second + ")";
  }
  if (d.count("OP_QUANT_CLAMP")) {
    auto lo = d.find("CLAMP_LO"), hi = d.find("CLAMP_HI");
    if (lo == d.end() || hi == d.end()) return std::nullopt;
    return "ew_quant_clamp(" + e + ", " + lo->second + ", " + hi->second + ")";
  }
  for (const char* other : {"OP_SQRT", "OP_RSQRT"}) {
    if (d.count(other)) return std::nullopt;
  }
  return e;
}

bool IsFusableProducer(const Dispatch& dispatch, bool elementwise_producers,
                       bool concat_producers) {
  // concat.comp: out0 = 0, its NUM_INPUTS inputs, the epilogue operand after
  // them; only a dispatch over all its output's units (a longer list is
  // split over disjoint ranges of one output, each its own dispatch).
  if (dispatch.shader == "concat") {
    const auto& d = dispatch.defines;
    const char* extent = d.count("AXIS_B") ? "OUT_B" : d.count("AXIS_H") ? "OUT_H"
                         : d.count("AXIS_W") ? "OUT_W" : "OUT_S";
    return concat_producers && dispatch.outputs.size() == 1 &&
           IntDefine(dispatch, "UNIT_BEGIN") == 0 &&
           IntDefine(dispatch, "UNIT_COUNT") == IntDefine(dispatch, extent) &&
           static_cast<long long>(dispatch.inputs.size()) ==
               IntDefine(dispatch, "NUM_INPUTS") + (d.count("EPILOGUE_IN") ? 1 : 0);
  }
  // elementwise.comp: out0 = 0, A = 1, B = 2 if it has one, the optional
  // epilogue operand after them (chains of elementwise ops: style
  // transfer's x * scale + offset).
  if (dispatch.shader == "elementwise") {
    return elementwise_producers && dispatch.outputs.size() == 1;
  }
  // Reductions whose store takes a unary epilogue (no tensor operand,
  // see TakesEpilogueOperand): a quantized AVERAGE_POOL_2D's or SOFTMAX's
  // simulator step, which otherwise costs a dependent dispatch and keeps the
  // mean and the softmax out of the logits GEMM (dw_fusion.h).
  if (dispatch.shader == "mean" || dispatch.shader == "channel_normalize") {
    return dispatch.outputs.size() == 1 && dispatch.inputs.size() == 1;
  }
  // The convolutions (transposed ones too): bindings out0 = 0, in0 = 1,
  // weights = 2, bias = 3, and the optional epilogue operand at 4.
  return (dispatch.shader == "conv2d" || dispatch.shader == "gemm" ||
          dispatch.shader == "depthwise_conv2d" ||
          dispatch.shader == "transpose_conv") &&
         dispatch.outputs.size() == 1 &&
         dispatch.inputs.size() == (dispatch.defines.count("EPILOGUE_IN") ? 4u : 3u);
}


// Whether the producer's shader has the EPILOGUE_IN binding (the
// reductions do not).
bool TakesEpilogueOperand(const Dispatch& producer) {
  return producer.shader != "mean" && producer.shader != "channel_normalize";
}

// Whether a producer that has its epilogue operand may take a second one:
// an elementwise binary op with a tensor B (elementwise.comp EPILOGUE_IN2,
// binding 4) that has none yet; or a tiled GEMM (gemm.comp EPILOGUE_IN2,
// binding 5) with nothing bound after its epilogue operand: ENet's
// bottleneck ends in 1x1 CONV + residual ADD + PRELU, whose ADD takes the
// first operand and whose per-channel alpha then stayed a dispatch of its
// own (27 of the hair segmentation stand-in's 122).
bool TakesSecondEpilogueOperand(const Dispatch& producer) {
  if (!producer.defines.count("EPILOGUE_IN") || producer.defines.count("EPILOGUE_IN2")) {
    return false;
  }
  if (producer.shader == "gemm") {
    return producer.inputs.size() == 4 && producer.read_write.empty() &&
           producer.outputs.size() == 1;
  }
  return producer.shader == "elementwise" && !producer.defines.count("B_LITERAL") &&
         producer.inputs.size() == 3;
}

}  // namespace

int FuseEpilogues(const std::vector<Value>& values,
                  const std::vector<ValueId>& keep,
                  std::vector<Dispatch>* dispatches, bool elementwise_producers,
                  int max_dispatch_buffers, bool second_operand, bool concat_producers) {
  std::vector<Dispatch>& list = *dispatches;
  std::vector<bool> removed(list.size(), false);
  const std::vector<bool> pinned = PinnedValues(values, keep, /*viewed_roots=*/true);
  std::map<size_t, int> steps;  // dispatch index -> consumers folded into it
  int fused = 0;

  for (size_t i = 0; i < list.size(); ++i) {
    Dispatch& consumer = list[i];
    if (consumer.shader != "elementwise" || consumer.outputs.size() != 1 ||
        consumer.inputs.empty() ||
        (HasUnfusableBinary(consumer) && !EpilogueTakesPrelu(consumer)) ||
        consumer.defines.count("A_SPLAT") || consumer.defines.count("B_SPLAT")) {
      continue;
    }
    const Shape4& out_shape = values[consumer.outputs[0]].shape;
    // The first input that a fusable producer wrote (its latest writer) and
    // that nothing else reads.
    int producer = -1;
    size_t operand = 0;
    for (size_t k = 0; k < consumer.inputs.size() && producer < 0; ++k) {
      const ValueId input = consumer.inputs[k];
      if (values[input].storage_of >= 0 || pinned[input] ||
          values[input].shape != out_shape) {
        continue;
      }
      int writer = -1;
      for (int j = static_cast<int>(i) - 1; j >= 0 && writer < 0; --j) {
        const auto& outs = list[j].outputs;
        if (!removed[j] && std::find(outs.begin(), outs.end(), input) != outs.end()) {
          writer = j;
        }
      }
      if (writer < 0 ||
          !IsFusableProducer(list[writer], elementwise_producers, concat_producers) ||
          steps[writer] >= kMaxEpilogueSteps) {
        continue;
      }
      int readers = 0;
      for (size_t j = 0; j < list.size(); ++j) {
        if (removed[j]) continue;
        for (ValueId read : list[j].inputs) readers += StorageRoot(values, read) == input;
      }
      if (readers == 1) {
        producer = writer;
        operand = k;
      }
    }
    if (producer < 0) continue;
    Dispatch& conv = list[producer];
    auto current = conv.defines.find(kEpilogueDefine);
    const std::string x = current == conv.defines.end() ? "x" : current->second;
    std::string expression = x;
    ValueId extra = -1;
    bool second = false;  // the extra operand is the producer's second
    const bool binary = consumer.defines.count("B_LITERAL") ||
                        consumer.inputs.size() == 2;
    if (binary) {
      std::string other;
      if (consumer.defines.count("B_LITERAL")) {
        other = "vec4(" + consumer.defines.at("B_VALUE") + ")";
      } else {
        extra = consumer.inputs[1 - operand];
        const Shape4& shape = values[extra].shape;
        if (conv.defines.count("EPILOGUE_IN") || conv.defines.count("EPILOGUE_IN2")) {
          // One operand only, or a second where the device allows it.
          if (!second_operand || !TakesSecondEpilogueOperand(conv)) continue;
          second = true;
        }
        const std::string name = second ? "epilogue_in2" : "epilogue_in";
        if (shape == out_shape) {
          other = "LOAD(" + name + ", index)";
        } else if (shape.b == 1 && shape.h == 1 && shape.w == 1 &&
                   shape.c == out_shape.c) {
          other = "LOAD(" + name + ", slice)";  // per-channel vector
        } else {
          continue;
        }
        if (!TakesEpilogueOperand(conv)) continue;
        // A GPU with 4 SSBOs per shader: out, input, weights and bias fill them.
        if (static_cast<int>(conv.outputs.size() + conv.inputs.size() +
                             conv.read_write.size()) + 1 > max_dispatch_buffers) {
          continue;
        }
      }
      auto combined = operand == 0 ? BinaryExpression(consumer, x, other)
                                   : BinaryExpression(consumer, other, x);
      if (!combined) continue;
      expression = *combined;
    }
    auto with_unary = UnaryExpression(consumer, expression);
    if (!with_unary) continue;

    // Fold: the producer now writes the consumer's output, at the
    // consumer's place in the order.
    Dispatch merged = std::move(conv);
    removed[producer] = true;
    merged.defines[kEpilogueDefine] = *with_unary;
    if (extra >= 0) {
      // EPILOGUE_IN2 implies EPILOGUE_IN in the shader (one axis of it).
      // The GEMM passes after this one refuse either (dw_fusion.cc).
      if (second) merged.defines.erase("EPILOGUE_IN");
      merged.defines[second ? "EPILOGUE_IN2" : "EPILOGUE_IN"] = "";
      merged.inputs.push_back(extra);
      // concat.comp's operand follows its inputs (bindings 1..NUM_INPUTS).
      if (merged.shader == "concat") {
        merged.defines["EPILOGUE_BINDING"] = std::to_string(merged.inputs.size());
      }
    }
    merged.outputs[0] = consumer.outputs[0];
    merged.label += " + " + consumer.label;
    merged.flops += consumer.flops;
    steps[i] = steps[producer] + 1;
    list[i] = std::move(merged);
    ++fused;
  }

  EraseRemoved(removed, &list);
  return fused;
}

std::vector<bool> PinnedValues(const std::vector<Value>& values,
                               const std::vector<ValueId>& keep, bool viewed_roots) {
  std::vector<bool> pinned(values.size(), false);
  for (size_t i = 0; i < values.size(); ++i) {
    const ValueId id = static_cast<ValueId>(i);
    if (values[i].kind == Value::Kind::kOutput) pinned[StorageRoot(values, id)] = true;
    if (viewed_roots && values[i].storage_of >= 0) pinned[values[i].storage_of] = true;
  }
  for (ValueId id : keep) pinned[StorageRoot(values, id)] = true;
  return pinned;
}

std::string Replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

int AbsorbProducer(DispatchScan& scan, int producer, Dispatch* consumer) {
  const size_t index = static_cast<size_t>(producer);
  return AbsorbProducer(scan.list[index], index, &scan.removed, consumer);
}

int AbsorbProducer(const Dispatch& producer, size_t index, std::vector<bool>* removed,
                   Dispatch* consumer) {
  consumer->label = producer.label + " + " + consumer->label;
  consumer->flops += producer.flops;
  (*removed)[index] = true;
  return 1;
}

long long IntDefine(const Dispatch& dispatch, const char* name) {
  auto it = dispatch.defines.find(name);
  if (it == dispatch.defines.end()) return -1;
  char* end = nullptr;
  const long long value = std::strtoll(it->second.c_str(), &end, 10);
  return (end == it->second.c_str() || *end != '\0') ? -1 : value;
}

std::map<std::string, std::string> KeptDefines(const Dispatch& dispatch,
                                               std::initializer_list<const char*> names) {
  std::map<std::string, std::string> kept;
  for (const char* name : names) {
    auto it = dispatch.defines.find(name);
    if (it != dispatch.defines.end()) kept[name] = it->second;
  }
  return kept;
}

int SoleReader(const std::vector<Value>& values, const std::vector<Dispatch>& list,
               const std::vector<bool>& removed, ValueId root) {
  int reader = -1, readers = 0;
  for (size_t j = 0; j < list.size(); ++j) {
    if (removed[j]) continue;
    for (ValueId read : list[j].inputs) {
      if (StorageRoot(values, read) == root) {
        ++readers;
        reader = static_cast<int>(j);
      }
    }
    for (ValueId read : list[j].read_write) readers += StorageRoot(values, read) == root;
  }
  return readers == 1 ? reader : -1;
}

void EraseRemoved(const std::vector<bool>& removed, std::vector<Dispatch>* dispatches) {
  std::vector<Dispatch> kept;
  kept.reserve(dispatches->size());
  for (size_t i = 0; i < dispatches->size(); ++i) {
    if (!removed[i]) kept.push_back(std::move((*dispatches)[i]));
  }
  dispatches->swap(kept);
}

}  // namespace tflite_gles

namespace tflite_gles {

std::optional<std::string> ElementwiseExpression(const Dispatch& dispatch,
                                                 const std::string& a,
                                                 const std::string& b) {
  if (HasUnfusableBinary(dispatch)) return std::nullopt;
  std::string expression = a;
  if (!b.empty()) {
    auto binary = BinaryExpression(dispatch, a, b);
    if (!binary) return std::nullopt;
    expression = *binary;
  }
  return UnaryExpression(dispatch, expression);
}

}  // namespace tflite_gles
