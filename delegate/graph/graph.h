// The GPU program of one delegated partition, and the builder kernels use to
// emit it.
//
// A partition becomes a list of Values (GPU tensors in PHWC4 layout, plus
// packed constants) and a list of Dispatches (one compute shader run each).
// Kernels never touch GL: they check a node, then describe dispatches here.
// The runtime (delegate/runtime/runtime.h) allocates, compiles and runs them.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "delegate/abi/node_view.h"
#include "delegate/graph/device_profile.h"
#include "delegate/graph/model_inputs.h"
#include "delegate/graph/quantization.h"
#include "egl/egl_environment.h"
#include "egl/status.h"

namespace tflite_gles {

using ValueId = int;

struct Value {
  enum class Kind { kIntermediate, kInput, kOutput, kConstant };
  Kind kind = Kind::kIntermediate;
  Shape4 shape;
  int tflite_index = -1;  // -1 for kernel-made temporaries and constants
  // kConstant: the data, already in the layout its kernel reads (vec4
  // packed, length a multiple of 4). Converted to fp16 at upload if needed.
  std::vector<float> constant_data;
  // A kConstant made on demand (MaterializeConstant): the serialization
  // cache may hold its converted bytes, and then it is never made. `key`
  // names what it makes (recipe + content hash of the TFLite data it reads,
  // GraphBuilder::NewLazyConstant); `floats` is its padded length.
  struct LazyConstant {
    std::function<std::vector<float>()> make;
    std::string key;
    size_t floats = 0;
  };
  std::shared_ptr<const LazyConstant> lazy;
  // A view (e.g. RESHAPE that keeps the PHWC4 layout): this Value reads and
  // writes the GPU buffer of `storage_of` under its own shape; -1 for a
  // Value with its own buffer. Always the root, never another view.
  ValueId storage_of = -1;
  // Size in vec4 for constants; shape.vec4_count() for tensors.
  long long vec4_count() const {
    if (kind != Kind::kConstant) return shape.vec4_count();
    return static_cast<long long>((lazy ? lazy->floats : constant_data.size()) / 4);
  }
};

// Makes a lazy constant's data now (a pass that edits constant_data calls it
// first; the edited Value is then no longer cacheable).
void MaterializeConstant(Value& value);

// The Value whose GPU buffer `id` uses: its root if it is a view, else itself.
inline ValueId StorageRoot(const std::vector<Value>& values, ValueId id) {
  const ValueId root = values[static_cast<size_t>(id)].storage_of;
  return root >= 0 ? root : id;
}

// One compute shader run. Buffers are bound by position: `outputs` at
// bindings 0..n-1 (TENSOR_OUT), then `inputs` at n.. (TENSOR_IN, which is a
// texture unit of the same number when reads go through samplerBuffer).
struct Dispatch {
  std::string shader;  // file name in shaders/ without ".comp"
  std::map<std::string, std::string> defines;
  std::vector<ValueId> outputs;
  std::vector<ValueId> inputs;
  // Buffers the shader both reads and writes across workgroups (a fused
  // softmax's raw logits and arrival counter, delegate/passes/dw_fusion.h): bound
  // as SSBOs after the inputs whatever the read path, at the bindings the
  // runtime passes as the defines READ_WRITE_BINDING_0, _1, ...
  std::vector<ValueId> read_write;
  // Invocations along x, y, z and the workgroup size. The runtime defines
  // LOCAL_X/LOCAL_Y/LOCAL_Z and splits an over-long 1-D x grid over y (use
  // global_index() and a bound check in such shaders).
  std::array<uint32_t, 3> grid = {1, 1, 1};
  std::array<uint32_t, 3> local = {64, 1, 1};
  std::string label;  // node description, for profiles and errors
  long long flops = 0;  // arithmetic per run, for GFLOP/s in profiles
  // The shader's @uniform values (shapes) are compiled in instead of read
  // from its uniform block (egl/shader_source.h): one program for this
  // shape alone. Kernels set it where an index exceeds the range the
  // shader's div_mod() is exact for (gl::kExactDivModLimit).
  bool specialize = false;
};

// Facts about the whole TFLite graph that kernels need beyond their node:
// which tensors are constants folded at init (fp16 weights behind a
// DEQUANTIZE node, as MediaPipe ships them; int8/uint8/int16 constants
// behind a DEQUANTIZE become their float view).
// How quantized (uint8/int8) tensors are treated (Options of the same
// names; delegate/quantization.h).
struct QuantizationOptions {
  // false: quantized tensors and quantized constants are declined, except
  // DEQUANTIZE-folded constants (as before quantized models were supported).
  bool allowed = true;
  // Activations rounded to their grid after every op (the simulator);
  // false: only clamped to their range (kernels/quantize.h).
  bool simulator = true;
};

class GraphContext {
 public:
  explicit GraphContext(abi::Context* context,
                        QuantizationOptions quantization = QuantizationOptions());
  // Constant in the model (unless some node reads it as the data it
  // computes on: then it is uploaded on every invoke, as TFLite re-reads it),
  // or produced by a DEQUANTIZE of a constant.
  bool IsConstant(int tensor_index) const;
  // A graph input that carries a buffer (found in the model, model_inputs.h):
  // TFLite maps it read-only, the application still sets it, and TFLite's
  // CPU kernels re-read it. An elementwise operand reads it on every invoke
  // (not constant); any other reader that would fold it is declined.
  bool IsGraphInputWithData(int tensor_index) const {
    return model_inputs_.constant_inputs.count(tensor_index) > 0;
  }
  // Whether the model's graph inputs could be found (else no tensor is
  // known to be one; model_inputs.h says when).
  const ModelInputs& model_inputs() const { return model_inputs_; }
  // The float values of a constant (float32, float16, DEQUANTIZE-folded,
  // or quantized: uint8/int8 weights and int32 biases with affine params,
  // dequantized per tensor or per channel), in TFLite's own layout.
  StatusOr<std::vector<float>> ConstantFloats(int tensor_index) const;
  // ConstantFloats(tensor_index)->size() (or its error), without making the
  // values where it needs not: a float32/float16/bool constant is counted
  // from its shape. The support checks call it for every weight tensor,
  // twice per node; copying 17 MB of MobileNet weights to count them was a
  // fifth of a filled start's apply (docs/perf/log.md, "cold2").
  StatusOr<size_t> ConstantFloatCount(int tensor_index) const;
  // Integer constants (int32/int64 shape and index operands).
  StatusOr<std::vector<int64_t>> ConstantInts(int tensor_index) const;
  abi::Context* context() const { return context_; }
  const QuantizationOptions& quantization() const { return quantization_; }
  // A constant read as its dequantized floats (not a DEQUANTIZE output).
  bool IsQuantizedConstant(int tensor_index) const;
  // What ConstantFloats(tensor_index) depends on, hashed: type, shape, bytes
  // and quantization of the tensor it reads (a folded DEQUANTIZE's input).
  std::string ConstantContentKey(int tensor_index) const;
  // The float values of a DEQUANTIZE input: float16/float32 as they are,
  // int8/uint8/int16 through their scale and zero point (per tensor or per
  // channel). With `values` null, only checks that it can.
  static Status DequantizedFloats(const abi::Tensor& tensor,
                                  std::vector<float>* values);

 private:
  abi::Context* context_;
  QuantizationOptions quantization_;
  std::map<int, int> dequantize_producer_;  // tensor -> its DEQUANTIZE input
  // TFLite constants some node reads as the data it computes on
  // (ConstantReadAsData): partition inputs, uploaded on every invoke.
  std::set<int> read_as_data_;
  ModelInputs model_inputs_;
};

class GraphBuilder {
 public:
  GraphBuilder(const GraphContext& graph, const DeviceProfile& device)
      : graph_(graph), device_(device) {}

  // The Value holding input `i` of `node`: the partition's tensor for it, or
  // a constant made from its data (PHWC4-packed) if it is constant.
  StatusOr<ValueId> Input(const NodeView& node, int i);
  // The Value that output `i` of `node` is written to.
  StatusOr<ValueId> Output(const NodeView& node, int i);
  // A Value for any TFLite tensor index (used by Input/Output).
  StatusOr<ValueId> TensorValue(int tflite_index);
  // A kernel-made temporary tensor (e.g. a reduction's partial results).
  ValueId NewTemporary(const Shape4& shape);
  // A constant in the layout the kernel's shader reads; `data.size()` is
  // padded with zeros to a multiple of 4.
  ValueId NewConstant(std::vector<float> data);
  // The same, made only if the serialization cache lacks it: `make` must own
  // what it reads (it runs at Allocate, after the kernel returned) and return
  // `floats` values before padding; `recipe` says how it packs (every
  // parameter of the packing), `sources` the TFLite tensors it reads.
  ValueId NewLazyConstant(size_t floats, const std::string& recipe,
                          const std::vector<int>& sources,
                          std::function<std::vector<float>()> make);
  // A constant PHWC4 tensor from BHWC floats (channels zero-padded).
  ValueId NewConstantTensor(const Shape4& shape, const std::vector<float>& bhwc);

  // Replaces the Value of `tflite_index` by `value` (no dispatch needed: the
  // op is a view, e.g. RESHAPE that keeps the PHWC4 layout).
  Status Alias(int tflite_index, ValueId value);
  // Points `tflite_index`, which already has a Value, at `value` instead:
  // later readers and the partition output see `value` (the quantization
  // simulator's step after the op that wrote the old one).
  Status Rebind(int tflite_index, ValueId value);
  // A Value with `shape` sharing the buffer of `base` (for Alias when the
  // shapes differ but the PHWC4 memory is the same); the caller guarantees
  // both shapes have the same vec4_count() and element placement.
  ValueId NewView(ValueId base, const Shape4& shape);

  // After each run, also write `value` into TFLite tensor `tflite_index` if
  // that tensor is a partition input: for ops whose CPU kernel updates an
  // input in place (the basic LSTM copies its new state into its state
  // inputs), so that the next Invoke sees the same tensors either way.
  void AddWriteBack(ValueId value, int tflite_index) {
    write_backs_.push_back({value, tflite_index});
  }
  const std::vector<std::pair<ValueId, int>>& write_backs() const {
    return write_backs_;
  }

  // A float partition input that only QUANTIZE nodes read is rounded to
  // their grid on the CPU at upload (TFLite's exact rounding: an image
  // scaled to [-1, 1] at scale 1/127.5 lies on ties, which the GPU's
  // division may round the other way); the simulator step after the
  // QUANTIZE then finds the values on its grid.
  void QuantizeOnUpload(int tflite_index, const QuantParams& q) {
    quantized_uploads_[tflite_index] = q;
  }
  const std::map<int, QuantParams>& quantized_uploads() const {
    return quantized_uploads_;
  }

  void AddDispatch(Dispatch dispatch) {
    dispatches_.push_back(std::move(dispatch));
  }
  size_t dispatch_count() const { return dispatches_.size(); }
  // The dispatches so far (a kernel looking at what wrote its input).
  const std::vector<Dispatch>& dispatches() const { return dispatches_; }
  // Appends " @<node>" to the labels of the dispatches from `first` on, so
  // that a profile row names the TFLite node it runs (bench/roofline.py
  // reads the node's shapes from the model by that index).
  void TagDispatchesWithNode(size_t first, int node_index) {
    for (size_t i = first; i < dispatches_.size(); ++i) {
      dispatches_[i].label += " @" + std::to_string(node_index);
    }
  }

  const Value& value(ValueId id) const { return values_[id]; }
  const std::vector<Value>& values() const { return values_; }
  const Shape4& shape(ValueId id) const { return values_[id].shape; }
  const GraphContext& graph() const { return graph_; }
  const DeviceProfile& device() const { return device_; }

  // Marks partition inputs/outputs (called by the delegate kernel).
  Status MarkInput(int tflite_index);
  Status MarkOutput(int tflite_index);

  std::vector<Value> TakeValues() { return std::move(values_); }
  std::vector<Dispatch> TakeDispatches() { return std::move(dispatches_); }
  const std::map<int, ValueId>& tensor_values() const { return tensor_values_; }

 private:
  const GraphContext& graph_;
  DeviceProfile device_;
  std::vector<Value> values_;
  std::vector<Dispatch> dispatches_;
  std::map<int, ValueId> tensor_values_;
  std::vector<std::pair<ValueId, int>> write_backs_;
  std::map<int, QuantParams> quantized_uploads_;
};

// Packs BHWC floats into PHWC4 order ([b][slice][h][w][4]), zero-padding the
// last slice's unused lanes.
std::vector<float> PackPhwc4(const Shape4& shape, const std::vector<float>& bhwc);

// Rounds `n` up to a multiple of `m`.
inline uint32_t RoundUp(uint32_t n, uint32_t m) { return (n + m - 1) / m * m; }

}  // namespace tflite_gles
