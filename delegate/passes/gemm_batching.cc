#include "delegate/passes/gemm_batching.h"

#include <algorithm>
#include <map>
#include <string>

#include "delegate/passes/fusion.h"

namespace tflite_gles {
namespace {

// The defines that may differ between GEMMs of one batch.
bool IsWidthDefine(const std::string& name) {
  return name == "OUT_S" || name == "OUT_C" || name == "WEIGHT_SLICES";
}

bool IsPlainOneRowSplitK(const Dispatch& d) {
  if (d.shader != "gemm" || !d.defines.count("SPLIT_K") || d.outputs.size() != 1 ||
      d.inputs.size() != 3 || !d.read_write.empty() || d.grid[2] != 1) {
    return false;
  }
  for (const auto& [name, value] : d.defines) {
    if (name.rfind("EPILOGUE", 0) == 0 || name.rfind("DW_PROLOGUE", 0) == 0 ||
        name == "MEAN_PROLOGUE" || name == "SOFTMAX_EPILOGUE" || name == kEpilogueDefine) {
      return false;
    }
  }
  // One row; every workgroup along x takes LOCAL_X slices, so the grid's
  // x is the padded slice count.
  return IntDefine(d, "ROWS") == 1 && IntDefine(d, "OUT_HW") == 1 &&
         IntDefine(d, "WEIGHT_SLICES") > 0 &&
         static_cast<long long>(d.grid[0]) == IntDefine(d, "WEIGHT_SLICES");
}

// Whether every read of `id` is a norm_stats AFFINE dispatch's gamma or
// beta (inputs 1 and 2).
bool ReadOnlyAsGammaOrBeta(const std::vector<Value>& values, ValueId id,
                           const std::vector<Dispatch>& list) {
  int reads = 0;
  for (const Dispatch& d : list) {
    for (ValueId rw : d.read_write) {
      if (StorageRoot(values, rw) == id) return false;
    }
    for (size_t k = 0; k < d.inputs.size(); ++k) {
      if (StorageRoot(values, d.inputs[k]) != id) continue;
      if (d.shader != "norm_stats" || !d.defines.count("AFFINE") || (k != 1 && k != 2) ||
          d.inputs[k] != id) {
        return false;
      }
      ++reads;
    }
  }
  return reads > 0;
}

// How many bindings of all dispatches name `id` itself.
int Bindings(ValueId id, const std::vector<Dispatch>& list) {
  int count = 0;
  for (const Dispatch& d : list) {
    for (const auto* ids : {&d.outputs, &d.inputs, &d.read_write}) {
      for (ValueId other : *ids) count += other == id;
    }
  }
  return count;
}

std::string BatchKey(const Dispatch& d) {
  std::string key = std::to_string(d.inputs[0]) + "|" + std::to_string(d.local[0]) + "," +
                    std::to_string(d.local[1]) + "," + std::to_string(d.local[2]) + "," +
                    std::to_string(d.grid[1]);
  for (const auto& [name, value] : d.defines) {
    if (!IsWidthDefine(name)) key += "|" + name + "=" + value;
  }
  return key;
}

}  // namespace

int BatchSharedInputGemms(std::vector<Value>* values_in, const std::vector<ValueId>& keep,
                          std::vector<Dispatch>* dispatches) {
  std::vector<Value>& values = *values_in;
  std::vector<Dispatch>& list = *dispatches;
  const std::vector<bool> pinned = PinnedValues(values, keep, /*viewed_roots=*/true);
  std::map<std::string, std::vector<size_t>> batches;
  for (size_t i = 0; i < list.size(); ++i) {
    const Dispatch& d = list[i];
    if (!IsPlainOneRowSplitK(d)) continue;
    const ValueId out = d.outputs[0];
    const Value& weights = values[d.inputs[1]];
    const Value& bias = values[d.inputs[2]];
    if (pinned[out] || values[out].storage_of >= 0 || values[out].shape.b != 1 ||
        weights.kind != Value::Kind::kConstant || bias.kind != Value::Kind::kConstant ||
        weights.storage_of >= 0 || bias.storage_of >= 0 ||
        Bindings(d.inputs[1], list) != 1 || Bindings(d.inputs[2], list) != 1 ||
        !ReadOnlyAsGammaOrBeta(values, out, list)) {
      continue;
    }
    batches[BatchKey(d)].push_back(i);
  }

  std::vector<bool> removed(list.size(), false);
  int saved = 0;
  for (const auto& [key, members] : batches) {
    if (members.size() < 2) continue;
    const long long steps = IntDefine(list[members[0]], "DEPTH_STEPS");
    long long total = 0;
    bool sizes_ok = steps > 0;
    for (size_t m : members) {
      const long long slices = IntDefine(list[m], "WEIGHT_SLICES");
      Value& w = values[list[m].inputs[1]];
      Value& b = values[list[m].inputs[2]];
      MaterializeConstant(w);
      MaterializeConstant(b);
      sizes_ok = sizes_ok &&
                 static_cast<long long>(w.constant_data.size()) == steps * slices * 16 &&
                 static_cast<long long>(b.constant_data.size()) == slices * 4;
      total += slices;
    }
    if (!sizes_ok) continue;
    // Joined weights: step by step, each GEMM's slices after the previous'.
    std::vector<float> weights(static_cast<size_t>(steps * total * 16));
    std::vector<float> bias;
    bias.reserve(static_cast<size_t>(total * 4));
    std::vector<long long> offset;
    long long at = 0;
    long long flops = 0;
    std::string labels;
    for (size_t m : members) {
      const long long slices = IntDefine(list[m], "WEIGHT_SLICES");
      const std::vector<float>& w = values[list[m].inputs[1]].constant_data;
      for (long long s = 0; s < steps; ++s) {
        std::copy(w.begin() + s * slices * 16, w.begin() + (s + 1) * slices * 16,
                  weights.begin() + (s * total + at) * 16);
      }
      const std::vector<float>& b = values[list[m].inputs[2]].constant_data;
      bias.insert(bias.end(), b.begin(), b.end());
      offset.push_back(at);
      at += slices;
      flops += list[m].flops;
    }
    Value joined_weights;
    joined_weights.kind = Value::Kind::kConstant;
    joined_weights.constant_data = std::move(weights);
    Value joined_bias;
    joined_bias.kind = Value::Kind::kConstant;
    joined_bias.constant_data = std::move(bias);
    Value out;
    out.shape.c = static_cast<int>(total * 4);
    const ValueId weights_id = static_cast<ValueId>(values.size());
    values.push_back(std::move(joined_weights));
    const ValueId bias_id = static_cast<ValueId>(values.size());
    values.push_back(std::move(joined_bias));
    const ValueId out_id = static_cast<ValueId>(values.size());
    values.push_back(std::move(out));

    Dispatch batched = list[members[0]];
    batched.defines["OUT_S"] = std::to_string(total);
    batched.defines["OUT_C"] = std::to_string(total * 4);
    batched.defines["WEIGHT_SLICES"] = std::to_string(total);
    batched.grid[0] = static_cast<uint32_t>(total);
    batched.outputs = {out_id};
    batched.inputs = {list[members[0]].inputs[0], weights_id, bias_id};
    batched.flops = flops;
    batched.label = std::to_string(members.size()) + " GEMMs of one input, batched (" +
                    list[members[0]].label + ", ...)";
    for (size_t j = 0; j < members.size(); ++j) {
      const Dispatch& member = list[members[j]];
      const ValueId old_out = member.outputs[0];
      for (Dispatch& reader : list) {
        for (size_t k = 1; k < reader.inputs.size() && k <= 2; ++k) {
          if (reader.shader != "norm_stats" || reader.inputs[k] != old_out) continue;
          reader.inputs[k] = out_id;
          reader.defines[k == 1 ? "GAMMA_BASE" : "BETA_BASE"] = std::to_string(offset[j]);
        }
      }
      // Nothing reads the old weights and bias any more.
      values[member.inputs[1]].constant_data.clear();
      values[member.inputs[2]].constant_data.clear();
      if (j > 0) removed[members[j]] = true;
    }
    list[members[0]] = std::move(batched);
    saved += static_cast<int>(members.size()) - 1;
  }
  EraseRemoved(removed, &list);
  return saved;
}

}  // namespace tflite_gles
