#include "delegate/graph/model_inputs.h"

#include <cstdio>
#include <cstring>
#include <type_traits>

#include "delegate/abi/node_view.h"

namespace tflite_gles {
namespace {

// Field offsets in the vtables of TFLite's schema (schema.fbs: the field's
// position * 2 + 4): Model.subgraphs, Model.buffers, SubGraph.tensors,
// SubGraph.inputs, Tensor.buffer, Buffer.data, Buffer.offset.
constexpr int kModelSubgraphs = 8;
constexpr int kModelBuffers = 12;
constexpr int kSubGraphTensors = 4;
constexpr int kSubGraphInputs = 6;
constexpr int kTensorBuffer = 8;
constexpr int kBufferData = 4;
constexpr int kBufferOffset = 6;

// Candidates (identifier hits) tried before giving up: an identifier inside
// the data is rare, and each failed parse is cheap; the cap bounds the worst
// case of a model whose data repeats it.
constexpr int kMaxCandidates = 64;
// How far below the lowest constant the start is looked for: a flatbuffer
// is under 2 GiB, and buffers outside it (offset > 1) follow it.
constexpr uintptr_t kMaxScanBytes = uintptr_t{1} << 31;

// One byte of memory that may belong to no object of ours (the search reads
// around the model, inside a readable mapping): not instrumented, so an
// ASan build does not take it for an overflow of the block it lands in.
#if defined(__GNUC__) || defined(__clang__)
__attribute__((no_sanitize_address))
#endif
inline uint8_t LoadByte(uintptr_t at) {
  return *reinterpret_cast<const volatile uint8_t*>(at);
}

// Bounds-checked reads of a little-endian flatbuffer inside [begin, end).
// Addresses are uintptr_t until checked, so no out-of-range pointer is ever
// formed.
class Reader {
 public:
  Reader(const uint8_t* begin, const uint8_t* end)
      : begin_(reinterpret_cast<uintptr_t>(begin)), end_(reinterpret_cast<uintptr_t>(end)) {}

  bool In(uintptr_t at, size_t bytes) const {
    return at >= begin_ && at <= end_ && bytes <= end_ - at;
  }
  template <typename T>
  bool Read(uintptr_t at, T* value) const {
    if (!In(at, sizeof(T))) return false;
    uint64_t bits = 0;
    for (size_t i = 0; i < sizeof(T); ++i) bits |= uint64_t{LoadByte(at + i)} << (8 * i);
    const auto narrowed = static_cast<std::make_unsigned_t<T>>(bits);
    std::memcpy(value, &narrowed, sizeof(T));
    return true;
  }
  // The uoffset at `at`, followed; 0 if out of range.
  uintptr_t Follow(uintptr_t at) const {
    uint32_t offset = 0;
    if (!Read(at, &offset) || offset == 0) return 0;
    const uintptr_t target = at + offset;
    return target > at && In(target, 4) ? target : 0;
  }
  // Address of field `vt_offset` of the table at `table`, 0 if absent.
  uintptr_t Field(uintptr_t table, int vt_offset) const {
    int32_t back = 0;
    if (!Read(table, &back)) return 0;
    const uintptr_t vtable = table - static_cast<uintptr_t>(static_cast<intptr_t>(back));
    uint16_t vtable_bytes = 0, field = 0;
    if (!Read(vtable, &vtable_bytes) || vt_offset + 2 > vtable_bytes ||
        !Read(vtable + vt_offset, &field) || field == 0) {
      return 0;
    }
    return In(table + field, 1) ? table + field : 0;
  }
  // A vector field: its length and the address of its first element.
  bool Vector(uintptr_t table, int vt_offset, size_t element_bytes, uint32_t* length,
              uintptr_t* elements) const {
    const uintptr_t field = Field(table, vt_offset);
    const uintptr_t vector = field ? Follow(field) : 0;
    if (vector == 0 || !Read(vector, length)) return false;
    *elements = vector + 4;
    return In(*elements, static_cast<size_t>(*length) * element_bytes);
  }

 private:
  uintptr_t begin_, end_;
};

// Where TFLite's InterpreterBuilder points buffer `index`'s tensor: past the
// flatbuffer (offset > 1, models over 2 GB) or at its data vector; 0 for no
// data.
uintptr_t BufferData(const Reader& reader, uintptr_t start, uint32_t buffers_length,
                     uintptr_t buffers, uint32_t index) {
  if (index == 0 || index >= buffers_length) return 0;
  const uintptr_t buffer = reader.Follow(buffers + 4 * static_cast<uintptr_t>(index));
  if (buffer == 0) return 0;
  uint64_t offset = 0;
  const uintptr_t offset_field = reader.Field(buffer, kBufferOffset);
  if (offset_field && reader.Read(offset_field, &offset) && offset > 1) {
    return start + static_cast<uintptr_t>(offset);
  }
  uint32_t length = 0;
  uintptr_t data = 0;
  if (!reader.Vector(buffer, kBufferData, 1, &length, &data) || length == 0) return 0;
  return data;
}

// The inputs of the subgraphs of the model starting at `start` whose buffers
// are exactly the context's read-only tensors; false if none is.
bool MatchModel(const abi::Context* context, const Reader& reader, uintptr_t start,
                std::set<int>* inputs) {
  const uintptr_t root = reader.Follow(start);
  uint32_t subgraphs_length = 0, buffers_length = 0;
  uintptr_t subgraphs = 0, buffers = 0;
  if (root == 0 ||
      !reader.Vector(root, kModelSubgraphs, 4, &subgraphs_length, &subgraphs) ||
      !reader.Vector(root, kModelBuffers, 4, &buffers_length, &buffers)) {
    return false;
  }
  bool matched_any = false;
  for (uint32_t s = 0; s < subgraphs_length; ++s) {
    const uintptr_t subgraph = reader.Follow(subgraphs + 4 * static_cast<uintptr_t>(s));
    uint32_t tensors_length = 0, inputs_length = 0;
    uintptr_t tensors = 0, input_list = 0;
    if (subgraph == 0 ||
        !reader.Vector(subgraph, kSubGraphTensors, 4, &tensors_length, &tensors) ||
        tensors_length == 0 || tensors_length > context->tensors_size) {
      continue;
    }
    // Every read-only tensor the model declares must point at its buffer,
    // and at least one must: then this is the context's subgraph (a buffer
    // shared by two subgraphs matches both; their inputs are merged, which
    // only ever treats more tensors as inputs).
    int matches = 0;
    bool consistent = true;
    for (uint32_t i = 0; i < tensors_length && consistent; ++i) {
      const abi::Tensor& tensor = context->tensors[i];
      if (tensor.allocation_type != abi::kMmapRo) continue;
      const uintptr_t table = reader.Follow(tensors + 4 * static_cast<uintptr_t>(i));
      uint32_t buffer_index = 0;
      const uintptr_t field = table ? reader.Field(table, kTensorBuffer) : 0;
      if (field) reader.Read(field, &buffer_index);
      const uintptr_t expected =
          table ? BufferData(reader, start, buffers_length, buffers, buffer_index) : 0;
      consistent = expected != 0 && expected == reinterpret_cast<uintptr_t>(tensor.data);
      ++matches;
    }
    if (!consistent || matches == 0) continue;
    matched_any = true;
    if (!reader.Vector(subgraph, kSubGraphInputs, 4, &inputs_length, &input_list)) continue;
    for (uint32_t k = 0; k < inputs_length; ++k) {
      int32_t index = -1;
      reader.Read(input_list + 4 * static_cast<uintptr_t>(k), &index);
      if (index >= 0 && static_cast<uint32_t>(index) < tensors_length &&
          IsConstantTensor(context->tensors[index])) {
        inputs->insert(index);
      }
    }
  }
  return matched_any;
}

// The lowest data pointer of the context's model-mapped constants; null if
// it has none.
const uint8_t* LowestConstant(const abi::Context* context) {
  const uint8_t* lowest = nullptr;
  for (size_t i = 0; i < context->tensors_size; ++i) {
    const abi::Tensor& tensor = context->tensors[i];
    if (tensor.allocation_type != abi::kMmapRo || tensor.data == nullptr) continue;
    const auto* data = static_cast<const uint8_t*>(tensor.data);
    if (lowest == nullptr || data < lowest) lowest = data;
  }
  return lowest;
}

// The readable span of this process's memory around `address` (adjacent
// readable mappings joined), from /proc/self/maps.
bool ReadableSpan(const uint8_t* address, const uint8_t** begin, const uint8_t** end) {
#if defined(__linux__)
  std::FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return false;
  const auto target = reinterpret_cast<uintptr_t>(address);
  uintptr_t span_begin = 0, span_end = 0;
  bool found = false;
  char line[512];
  while (std::fgets(line, sizeof(line), maps) != nullptr) {
    if (std::strchr(line, '\n') == nullptr) {
      // A long path: skip the rest of the line, so its tail is never
      // parsed as a mapping of its own.
      int c = 0;
      while ((c = std::fgetc(maps)) != EOF && c != '\n') {
      }
    }
    unsigned long low = 0, high = 0;
    char perms[5] = {0};
    if (std::sscanf(line, "%lx-%lx %4s", &low, &high, perms) != 3) continue;
    const bool readable = perms[0] == 'r';
    if (found) {
      // Join the readable mappings that follow without a gap, then stop.
      if (!readable || low != span_end) break;
      span_end = high;
      continue;
    }
    if (!readable) {
      span_begin = span_end = 0;
      continue;
    }
    if (low != span_end) span_begin = low;  // a gap starts a new span
    span_end = high;
    found = target >= low && target < high;
  }
  std::fclose(maps);
  if (!found) return false;
  *begin = reinterpret_cast<const uint8_t*>(span_begin);
  *end = reinterpret_cast<const uint8_t*>(span_end);
  return true;
#else
  (void)address; (void)begin; (void)end;
  return false;
#endif
}

}  // namespace

ModelInputs FindModelInputsIn(const abi::Context* context, const uint8_t* begin,
                              const uint8_t* end, const uint8_t* lowest) {
  ModelInputs result;
  const Reader reader(begin, end);
  const auto low = reinterpret_cast<uintptr_t>(begin);
  auto at = reinterpret_cast<uintptr_t>(lowest);
  if (at < low || at > reinterpret_cast<uintptr_t>(end) || at - low < 8) {
    result.why = "the constants lie outside the memory searched";
    return result;
  }
  // The flatbuffer starts before its first buffer's data: its root offset,
  // then the file identifier.
  int candidates = 0;
  for (at -= 8;; --at) {
    if (LoadByte(at + 4) == 'T' && LoadByte(at + 5) == 'F' && LoadByte(at + 6) == 'L' &&
        LoadByte(at + 7) == '3') {
      std::set<int> inputs;
      if (MatchModel(context, reader, at, &inputs)) {
        result.known = true;
        result.constant_inputs = std::move(inputs);
        return result;
      }
      if (++candidates >= kMaxCandidates) break;
    }
    if (at == low || reinterpret_cast<uintptr_t>(lowest) - at > kMaxScanBytes) break;
  }
  result.why = "no TFLite model (\"TFL3\") whose buffers are the context's constants";
  return result;
}

ModelInputs FindModelInputs(const abi::Context* context) {
  const uint8_t* lowest = LowestConstant(context);
  if (lowest == nullptr) {
    ModelInputs none;
    none.known = true;  // no constant at all, so no graph input carries one
    return none;
  }
  const uint8_t *begin = nullptr, *end = nullptr;
  if (!ReadableSpan(lowest, &begin, &end)) {
    ModelInputs unknown;
    unknown.why = "the constants' memory is not in /proc/self/maps";
    return unknown;
  }
  return FindModelInputsIn(context, begin, end, lowest);
}

Status CheckInputShapesUnchanged(
    const abi::Context* context, const std::vector<std::pair<int, std::vector<int>>>& built) {
  for (const auto& [index, dims] : built) {
    const abi::Tensor& tensor = context->tensors[index];
    std::vector<int> now = DimsVector(tensor.dims);
    if (now != dims) {
      auto text = [](const std::vector<int>& d) {
        std::string out;
        for (int v : d) out += (out.empty() ? "" : "x") + std::to_string(v);
        return out;
      };
      return Status::Error(
          "input '" + std::string(tensor.name ? tensor.name : "?") +
          "' was resized from " + text(dims) + " to " + text(now) +
          " after the delegate was applied; the GPU program is built for the "
          "model's shapes. Resize before applying the delegate, or create it "
          "with reapply_on_resize=true to have it re-applied on every resize");
    }
  }
  return Status::Ok();
}

}  // namespace tflite_gles
