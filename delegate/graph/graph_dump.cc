#include "delegate/graph/graph_dump.h"

#include <cstdio>
#include <sstream>

#include "delegate/abi/node_view.h"
#include "delegate/abi/tflite_builtin.h"

namespace tflite_gles {
namespace {

std::string Quote(const char* text) {
  std::string out = "\"";
  for (const char* p = text ? text : ""; *p; ++p) {
    const unsigned char ch = static_cast<unsigned char>(*p);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += static_cast<char>(ch);
    } else if (ch < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", ch);
      out += escaped;
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out + "\"";
}

std::string Ints(const abi::IntArray* array) {
  std::string out = "[";
  for (int i = 0; array != nullptr && i < array->size; ++i) {
    out += (i ? "," : "") + std::to_string(array->data[i]);
  }
  return out + "]";
}

std::string IntList(const int* values, int count) {
  std::string out = "[";
  for (int i = 0; i < count; ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out + "]";
}

std::string Float(float value) {
  std::ostringstream out;
  out.precision(9);
  out << value;
  return out.str();
}

// The builtin parameters we rely on, decoded through tflite_builtin.h.
std::string Params(int op, const void* data) {
  if (data == nullptr) return "null";
  std::ostringstream o;
  using namespace abi;
  switch (op) {
    case kTfLiteBuiltinConv2d: {
      auto* p = static_cast<const ConvParams*>(data);
      o << "{\"padding\":" << p->padding << ",\"stride_w\":" << p->stride_width
        << ",\"stride_h\":" << p->stride_height << ",\"activation\":" << p->activation
        << ",\"dilation_w\":" << p->dilation_width_factor
        << ",\"dilation_h\":" << p->dilation_height_factor << "}";
      break;
    }
    case kTfLiteBuiltinDepthwiseConv2d: {
      auto* p = static_cast<const DepthwiseConvParams*>(data);
      o << "{\"padding\":" << p->padding << ",\"stride_w\":" << p->stride_width
        << ",\"stride_h\":" << p->stride_height
        << ",\"depth_multiplier\":" << p->depth_multiplier
        << ",\"activation\":" << p->activation
        << ",\"dilation_w\":" << p->dilation_width_factor
        << ",\"dilation_h\":" << p->dilation_height_factor << "}";
      break;
    }
    case kTfLiteBuiltinAveragePool2d:
    case kTfLiteBuiltinMaxPool2d: {
      auto* p = static_cast<const PoolParams*>(data);
      o << "{\"padding\":" << p->padding << ",\"stride_w\":" << p->stride_width
        << ",\"stride_h\":" << p->stride_height << ",\"filter_w\":" << p->filter_width
        << ",\"filter_h\":" << p->filter_height << ",\"activation\":" << p->activation << "}";
      break;
    }
    case kTfLiteBuiltinFullyConnected: {
      auto* p = static_cast<const FullyConnectedParams*>(data);
      o << "{\"activation\":" << p->activation << ",\"weights_format\":" << p->weights_format
        << ",\"keep_num_dims\":" << (p->keep_num_dims ? "true" : "false") << "}";
      break;
    }
    case kTfLiteBuiltinAdd:
      o << "{\"activation\":" << static_cast<const AddParams*>(data)->activation << "}";
      break;
    case kTfLiteBuiltinSub:
      o << "{\"activation\":" << static_cast<const SubParams*>(data)->activation << "}";
      break;
    case kTfLiteBuiltinMul:
      o << "{\"activation\":" << static_cast<const MulParams*>(data)->activation << "}";
      break;
    case kTfLiteBuiltinDiv:
      o << "{\"activation\":" << static_cast<const DivParams*>(data)->activation << "}";
      break;
    case kTfLiteBuiltinConcatenation: {
      auto* p = static_cast<const ConcatenationParams*>(data);
      o << "{\"axis\":" << p->axis << ",\"activation\":" << p->activation << "}";
      break;
    }
    case kTfLiteBuiltinReshape: {
      auto* p = static_cast<const ReshapeParams*>(data);
      o << "{\"shape\":" << IntList(p->shape, p->num_dimensions) << "}";
      break;
    }
    case kTfLiteBuiltinSoftmax:
      o << "{\"beta\":" << Float(static_cast<const SoftmaxParams*>(data)->beta) << "}";
      break;
    case kTfLiteBuiltinResizeBilinear: {
      auto* p = static_cast<const ResizeBilinearParams*>(data);
      o << "{\"align_corners\":" << (p->align_corners ? "true" : "false")
        << ",\"half_pixel_centers\":" << (p->half_pixel_centers ? "true" : "false") << "}";
      break;
    }
    case kTfLiteBuiltinStridedSlice: {
      auto* p = static_cast<const StridedSliceParams*>(data);
      o << "{\"begin_mask\":" << p->begin_mask << ",\"end_mask\":" << p->end_mask
        << ",\"ellipsis_mask\":" << p->ellipsis_mask << ",\"new_axis_mask\":" << p->new_axis_mask
        << ",\"shrink_axis_mask\":" << p->shrink_axis_mask << "}";
      break;
    }
    case kTfLiteBuiltinTransposeConv: {
      auto* p = static_cast<const TransposeConvParams*>(data);
      o << "{\"padding\":" << p->padding << ",\"stride_w\":" << p->stride_width
        << ",\"stride_h\":" << p->stride_height << ",\"activation\":" << p->activation << "}";
      break;
    }
    case kTfLiteBuiltinMean:
      o << "{\"keep_dims\":"
        << (static_cast<const ReducerParams*>(data)->keep_dims ? "true" : "false") << "}";
      break;
    case kTfLiteBuiltinLeakyRelu:
      o << "{\"alpha\":" << Float(static_cast<const LeakyReluParams*>(data)->alpha) << "}";
      break;
    case kTfLiteBuiltinSqueeze: {
      auto* p = static_cast<const SqueezeParams*>(data);
      o << "{\"squeeze_dims\":" << IntList(p->squeeze_dims, p->num_squeeze_dims) << "}";
      break;
    }
    case kTfLiteBuiltinSplit:
      o << "{\"num_splits\":" << static_cast<const SplitParams*>(data)->num_splits << "}";
      break;
    case kTfLiteBuiltinDepthToSpace:
      o << "{\"block_size\":" << static_cast<const DepthToSpaceParams*>(data)->block_size << "}";
      break;
    case kTfLiteBuiltinMirrorPad:
      o << "{\"mode\":" << static_cast<const MirrorPaddingParams*>(data)->mode << "}";
      break;
    case kTfLiteBuiltinLstm: {
      auto* p = static_cast<const LstmParams*>(data);
      o << "{\"activation\":" << p->activation << ",\"cell_clip\":" << Float(p->cell_clip)
        << ",\"proj_clip\":" << Float(p->proj_clip) << ",\"kernel_type\":" << p->kernel_type << "}";
      break;
    }
    default:
      return "null";
  }
  return o.str();
}

}  // namespace

std::string DumpGraphJson(abi::Context* context) {
  std::ostringstream out;
  out << "{\"tensors\":[";
  for (size_t i = 0; i < context->tensors_size; ++i) {
    const abi::Tensor& t = context->tensors[i];
    out << (i ? "," : "") << "{\"index\":" << i << ",\"name\":" << Quote(t.name)
        << ",\"type\":" << t.type << ",\"dims\":" << Ints(t.dims)
        << ",\"bytes\":" << t.bytes << ",\"allocation_type\":" << t.allocation_type
        << ",\"is_variable\":" << (t.is_variable ? "true" : "false")
        << ",\"scale\":" << Float(t.params.scale) << ",\"zero_point\":" << t.params.zero_point
        << ",\"quantization_type\":" << t.quantization.type
        << ",\"has_data\":" << (t.data != nullptr ? "true" : "false") << "}";
  }
  out << "],\"nodes\":[";
  abi::IntArray* plan = nullptr;
  if (context->GetExecutionPlan(context, &plan) == abi::kOk) {
    for (int i = 0; i < plan->size; ++i) {
      abi::Node* node = nullptr;
      abi::Registration* registration = nullptr;
      if (context->GetNodeAndRegistration(context, plan->data[i], &node, &registration) !=
          abi::kOk) {
        continue;
      }
      out << (i ? "," : "") << "{\"index\":" << plan->data[i]
          << ",\"builtin_code\":" << registration->builtin_code
          << ",\"version\":" << registration->version
          << ",\"custom_name\":" << Quote(registration->custom_name)
          << ",\"inputs\":" << Ints(node->inputs) << ",\"outputs\":" << Ints(node->outputs)
          << ",\"custom_data_size\":" << node->custom_initial_data_size
          << ",\"params\":" << Params(registration->builtin_code, node->builtin_data) << "}";
    }
  }
  out << "]}";
  return out.str();
}

Status WriteGraphDump(abi::Context* context, const std::string& path) {
  FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    return Status::Error("cannot open graph dump file '" + path + "'");
  }
  const std::string json = DumpGraphJson(context);
  const bool written = std::fwrite(json.data(), 1, json.size(), file) == json.size();
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed) {
    return Status::Error("writing graph dump file '" + path + "' failed");
  }
  return Status::Ok();
}

}  // namespace tflite_gles
