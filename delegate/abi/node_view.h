// Read-only views of TFLite tensors and nodes, in the terms kernels need.
#pragma once

#include <string>
#include <vector>

#include "delegate/abi/tflite_abi.h"
#include "egl/status.h"

namespace tflite_gles {

// A tensor's shape as the GPU stores it: BHWC, channels sliced into vec4s
// (PHWC4 per batch: [b][slice][h][w] of vec4). TFLite ranks map as
//   rank 0 -> 1x1x1x1, rank 1 [c] -> 1x1x1xc, rank 2 [b,c] -> bx1x1xc,
//   rank 3 [b,w,c] -> bx1xwxc, rank 4 [b,h,w,c] -> bxhxwxc.
struct Shape4 {
  int b = 1, h = 1, w = 1, c = 1;

  int slices() const { return (c + 3) / 4; }
  long long elements() const { return 1LL * b * h * w * c; }
  long long vec4_count() const { return 1LL * b * h * w * slices(); }
  bool operator==(const Shape4& o) const {
    return b == o.b && h == o.h && w == o.w && c == o.c;
  }
  bool operator!=(const Shape4& o) const { return !(*this == o); }
  std::string ToString() const;
};

// Maps TFLite dims to Shape4; fails for rank > 4, zero or negative dims.
StatusOr<Shape4> ShapeFromDims(const abi::IntArray* dims);
std::vector<int> DimsVector(const abi::IntArray* dims);
const char* TypeName(abi::Type type);

// One node of the graph being delegated.
class NodeView {
 public:
  NodeView(abi::Context* context, int node_index, const abi::Node* node,
           const abi::Registration* registration)
      : context_(context),
        index_(node_index),
        node_(node),
        registration_(registration) {}

  int index() const { return index_; }
  int op() const { return registration_->builtin_code; }
  int version() const { return registration_->version; }
  // The custom op's name, or "" for builtin ops.
  std::string custom_name() const;
  // "CONV_2D v2" or "CUSTOM Convolution2DTransposeBias v1", for messages.
  std::string Describe() const;

  int num_inputs() const { return node_->inputs->size; }
  int num_outputs() const { return node_->outputs->size; }
  // TFLite tensor index of input i; kOptionalTensor (-1) if absent.
  int input_index(int i) const { return node_->inputs->data[i]; }
  int output_index(int i) const { return node_->outputs->data[i]; }
  bool has_input(int i) const {
    return i < num_inputs() && input_index(i) >= 0;
  }
  const abi::Tensor& input(int i) const {
    return context_->tensors[input_index(i)];
  }
  const abi::Tensor& output(int i) const {
    return context_->tensors[output_index(i)];
  }
  const abi::Tensor& tensor(int tensor_index) const {
    return context_->tensors[tensor_index];
  }
  // The builtin parameter struct (see delegate/abi/tflite_builtin.h), or null.
  template <typename Params>
  const Params* params() const {
    return static_cast<const Params*>(node_->builtin_data);
  }
  const void* custom_data() const { return node_->custom_initial_data; }
  int custom_data_size() const { return node_->custom_initial_data_size; }

  abi::Context* context() const { return context_; }
  const abi::Node* node() const { return node_; }

 private:
  abi::Context* context_;
  int index_;
  const abi::Node* node_;
  const abi::Registration* registration_;
};

// True for tensors whose data is fixed in the model (weights, biases, shape
// operands): read-only allocations with data present.
bool IsConstantTensor(const abi::Tensor& tensor);

}  // namespace tflite_gles
