#include "delegate/passes/fusion.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>

namespace tflite_gles {
namespace {

// The elementwise binary steps that fuse, as GLSL over operands A and B.
// Each must compute exactly what shaders/elementwise.comp's binary_op does.
std::optional<std::string> BinaryExpression(const Dispatch& consumer,
                                            const std::string& a,
                                            const std::string& b) {
  const auto& d = consumer.defines;
  // ADD/SUB/MUL/DIV clamp to [-FLT_MAX, FLT_MAX] keeping NaN, as
  // elementwise.comp's main() does after binary_op (TFLite's CPU kernels
  // clamp to the activation range, so overflow and x/0 are not Inf there).
  auto float_range = [](const std::string& e) {
    return "mix(clamp(" + e + ", vec4(-3.40282347e38), vec4(3.40282347e38)), " +
           e + ", isnan(" + e + "))";
  };
  if (d.count("OP_ADD")) return float_range("(" + a + " + " + b + ")");
  if (d.count("OP_SUB")) return float_range("(" + a + " - " + b + ")");
  if (d.count("OP_MUL")) return float_range("(" + a + " * " + b + ")");
  if (d.count("OP_DIV")) return float_range("(" + a + " / " + b + ")");
  if (d.count("OP_MAXIMUM")) return "max(" + a + ", " + b + ")";
  if (d.count("OP_MINIMUM")) return "min(" + a + ", " + b + ")";
  return std::nullopt;
}

bool HasUnfusableBinary(const Dispatch& consumer) {
  for (const char* op : {"OP_POW", "OP_PRELU", "OP_LOGICAL_AND"}) {
    if (consumer.defines.count(op)) return true;
  }
  return false;
}

// The unary step (fused activation or unary op) applied to `e`, matching
// elementwise.comp's unary_op and the preamble's activate(); `e` is
// "unchanged" when the consumer has none, nullopt when it has one that does
// not fuse (SQRT and RSQRT stay: rare after a convolution).
std::optional<std::string> UnaryExpression(const Dispatch& consumer,
                                           const std::string& e) {
  const auto& d = consumer.defines;
  if (d.count("ACT_RELU")) return "max(" + e + ", vec4(0.0))";
  if (d.count("ACT_RELU6")) return "clamp(" + e + ", vec4(0.0), vec4(6.0))";
  if (d.count("ACT_RELU_N1_TO_1")) {
    return "clamp(" + e + ", vec4(-1.0), vec4(1.0))";
  }
  if (d.count("OP_RELU_0_TO_1")) return "clamp(" + e + ", vec4(0.0), vec4(1.0))";
  if (d.count("ACT_TANH")) {
    return "tanh(clamp(" + e + ", vec4(-20.0), vec4(20.0)))";
  }
  if (d.count("ACT_SIGMOID")) {
    return "(vec4(1.0) / (vec4(1.0) + exp(-" + e + ")))";
  }
  if (d.count("OP_HARD_SWISH")) {
    return "(" + e + " * clamp(" + e +
           " + vec4(3.0), vec4(0.0), vec4(6.0)) * (1.0 / 6.0))";
  }
  if (d.count("OP_LEAKY_RELU")) {
    auto alpha = d.find("ALPHA");
    if (alpha == d.end()) return std::nullopt;
    return "mix(" + e + " * " + alpha->second + ", " + e + ", greaterThanEqual(" +
           e + ", vec4(0.0)))";
  }
  if (d.count("OP_FAKE_QUANT")) {
    // The quantization simulator (delegate/graph/quantization.h), as
    // elementwise.comp's unary_op computes it.
    auto inv = d.find("Q_INV_SCALE"), scale = d.find("Q_SCALE");
    auto lo = d.find("Q_LO"), hi = d.find("Q_HI");
    if (inv == d.end() || scale == d.end() || lo == d.end() || hi == d.end()) {
      return std::nullopt;
    }
    return "(clamp(trunc(" + e + " * " + inv->second + " + sign(" + e +
           ") * 0.5), vec4(" + lo->second + "), vec4(" + hi->second + ")) * " +
           scale->second + ")";
  }
  if (d.count("OP_ABS")) return "abs(" + e + ")";
  if (d.count("OP_NEG")) return "(-" + e + ")";
  if (d.count("OP_SQUARE")) return "(" + e + " * " + e + ")";
  if (d.count("OP_EXP")) return "exp(" + e + ")";
  if (d.count("OP_ELU")) {
    return "mix(exp(min(" + e + ", vec4(0.0))) - vec4(1.0), " + e +
           ", greaterThan(" + e + ", vec4(0.0)))";
  }
  for (const char* other : {"OP_SQRT", "OP_RSQRT"}) {
    if (d.count(other)) return std::nullopt;
  }
  return e;
}

bool IsFusableProducer(const Dispatch& dispatch, bool elementwise_producers) {
  // elementwise.comp: out0 = 0, A = 1, B = 2 if it has one, the optional
  // epilogue operand after them (chains of elementwise ops: style
  // transfer's x * scale + offset).
  if (dispatch.shader == "elementwise") {
    return elementwise_producers && dispatch.outputs.size() == 1;
  }
  // The convolutions: bindings out0 = 0, in0 = 1, weights = 2, bias = 3,
  // and the optional epilogue operand at 4.
  return (dispatch.shader == "conv2d" || dispatch.shader == "gemm" ||
          dispatch.shader == "depthwise_conv2d") &&
         dispatch.outputs.size() == 1 &&
         dispatch.inputs.size() == (dispatch.defines.count("EPILOGUE_IN") ? 4u : 3u);
}


}  // namespace

int FuseEpilogues(const std::vector<Value>& values,
                  const std::vector<ValueId>& keep,
                  std::vector<Dispatch>* dispatches, bool elementwise_producers) {
  std::vector<Dispatch>& list = *dispatches;
  std::vector<bool> removed(list.size(), false);
  const std::vector<bool> pinned = PinnedValues(values, keep, /*viewed_roots=*/true);
  std::map<size_t, int> steps;  // dispatch index -> consumers folded into it
  int fused = 0;

  for (size_t i = 0; i < list.size(); ++i) {
    Dispatch& consumer = list[i];
    if (consumer.shader != "elementwise" || consumer.outputs.size() != 1 ||
        consumer.inputs.empty() || HasUnfusableBinary(consumer) ||
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
      if (writer < 0 || !IsFusableProducer(list[writer], elementwise_producers) ||
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
    const bool binary = consumer.defines.count("B_LITERAL") ||
                        consumer.inputs.size() == 2;
    if (binary) {
      std::string other;
      if (consumer.defines.count("B_LITERAL")) {
        other = "vec4(" + consumer.defines.at("B_VALUE") + ")";
      } else {
        extra = consumer.inputs[1 - operand];
        const Shape4& shape = values[extra].shape;
        if (shape == out_shape) {
          other = "LOAD(epilogue_in, index)";
        } else if (shape.b == 1 && shape.h == 1 && shape.w == 1 &&
                   shape.c == out_shape.c) {
          other = "LOAD(epilogue_in, slice)";  // per-channel vector
        } else {
          continue;
        }
        if (conv.defines.count("EPILOGUE_IN")) continue;  // one operand only
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
      merged.defines["EPILOGUE_IN"] = "";
      merged.inputs.push_back(extra);
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

long long IntDefine(const Dispatch& dispatch, const char* name) {
  auto it = dispatch.defines.find(name);
  if (it == dispatch.defines.end()) return -1;
  char* end = nullptr;
  const long long value = std::strtoll(it->second.c_str(), &end, 10);
  return (end == it->second.c_str() || *end != '\0') ? -1 : value;
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
