// FindModelInputsIn (delegate/graph/model_inputs.h) on flatbuffers written
// here field by field from TFLite's schema (not by the code under test), and
// on garbage between guard pages: the graph inputs that carry a buffer are
// found where the context's constants are the model's buffers, "unknown"
// everywhere else, and no read leaves the memory it was given.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <vector>

#include "delegate/graph/model_inputs.h"

namespace tflite_gles {
namespace {

// A little-endian flatbuffer laid out front to back: every offset points
// forward, every vtable sits just before its table.
class Flatbuffer {
 public:
  std::vector<uint8_t> bytes;

  size_t Here() const { return bytes.size(); }
  void Align(size_t n) {
    while (bytes.size() % n != 0) bytes.push_back(0);
  }
  size_t U32(uint32_t value) {
    Align(4);
    const size_t at = Here();
    Put(&value, 4);
    return at;
  }
  void Point(size_t at, size_t target) {  // the uoffset at `at` -> `target`
    const auto offset = static_cast<uint32_t>(target - at);
    std::memcpy(&bytes[at], &offset, 4);
  }
  // A table of `n` 4-byte fields (field i at vtable slot i); the slots'
  // positions go to `slots`.
  size_t Table(int n, std::vector<size_t>* slots) {
    Align(4);
    const size_t vtable = Here();
    Put16(static_cast<uint16_t>(4 + 2 * n));
    Put16(static_cast<uint16_t>(4 + 4 * n));
    for (int i = 0; i < n; ++i) Put16(static_cast<uint16_t>(4 + 4 * i));
    Align(4);
    const size_t table = Here();
    const auto back = static_cast<int32_t>(table - vtable);
    Put(&back, 4);
    slots->clear();
    for (int i = 0; i < n; ++i) slots->push_back(U32(0));
    return table;
  }

 private:
  void Put(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    bytes.insert(bytes.end(), p, p + n);
  }
  void Put16(uint16_t value) { Put(&value, 2); }
};

// One subgraph of three float tensors [4]: 0 a graph input without data,
// 1 a graph input with a buffer, 2 a constant. `data_at` gets where the
// buffers' data of tensors 1 and 2 start.
std::vector<uint8_t> ThreeTensorModel(size_t data_at[3]) {
  Flatbuffer fb;
  const size_t root_slot = fb.U32(0);
  fb.bytes.insert(fb.bytes.end(), {'T', 'F', 'L', '3'});
  std::vector<size_t> model;  // version, operator_codes, subgraphs, description, buffers
  fb.Point(root_slot, fb.Table(5, &model));
  const size_t subgraphs = fb.U32(1);
  const size_t subgraph_slot = fb.U32(0);
  fb.Point(model[2], subgraphs);
  std::vector<size_t> subgraph;  // tensors, inputs
  fb.Point(subgraph_slot, fb.Table(2, &subgraph));
  const size_t tensors = fb.U32(3);
  size_t tensor_slots[3];
  for (size_t& slot : tensor_slots) slot = fb.U32(0);
  fb.Point(subgraph[0], tensors);
  for (uint32_t t = 0; t < 3; ++t) {
    std::vector<size_t> tensor;  // shape, type, buffer
    fb.Point(tensor_slots[t], fb.Table(3, &tensor));
    std::memcpy(&fb.bytes[tensor[2]], &t, 4);  // tensor t uses buffer t (0: none)
  }
  const size_t inputs = fb.U32(2);
  fb.U32(0);
  fb.U32(1);
  fb.Point(subgraph[1], inputs);
  const size_t buffers = fb.U32(3);
  size_t buffer_slots[3];
  for (size_t& slot : buffer_slots) slot = fb.U32(0);
  fb.Point(model[4], buffers);
  for (int b = 0; b < 3; ++b) {
    std::vector<size_t> buffer;  // data
    fb.Point(buffer_slots[b], fb.Table(1, &buffer));
    if (b == 0) continue;
    fb.Align(16);
    fb.Point(buffer[0], fb.U32(16));
    data_at[b] = fb.Here();
    fb.bytes.resize(fb.Here() + 16, 0);
  }
  return fb.bytes;
}

struct FakeContext {
  abi::Tensor tensors[3]{};
  abi::Context context{};

  FakeContext() {
    context.tensors = tensors;
    context.tensors_size = 3;
    tensors[0].allocation_type = abi::kArenaRw;
  }
  void Constant(int i, const uint8_t* data) {
    tensors[i].allocation_type = abi::kMmapRo;
    tensors[i].data = const_cast<uint8_t*>(data);
    tensors[i].bytes = 16;
  }
};

// `bytes` copied between two inaccessible pages: a read outside faults.
class Guarded {
 public:
  explicit Guarded(const std::vector<uint8_t>& bytes) {
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    inner_ = (bytes.size() + page_ - 1) / page_ * page_;
    void* map = mmap(nullptr, inner_ + 2 * page_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(map, MAP_FAILED);
    base_ = static_cast<uint8_t*>(map);
    EXPECT_EQ(mprotect(base_ + page_, inner_, PROT_READ | PROT_WRITE), 0);
    begin_ = base_ + page_ + (inner_ - bytes.size());  // flush with the upper guard
    std::memcpy(begin_, bytes.data(), bytes.size());
    end_ = begin_ + bytes.size();
  }
  ~Guarded() { munmap(base_, inner_ + 2 * page_); }
  uint8_t* begin() const { return begin_; }
  uint8_t* end() const { return end_; }

 private:
  size_t page_ = 0, inner_ = 0;
  uint8_t *base_ = nullptr, *begin_ = nullptr, *end_ = nullptr;
};

TEST(ModelInputs, FindsTheGraphInputThatCarriesABuffer) {
  size_t data_at[3] = {};
  const Guarded model(ThreeTensorModel(data_at));
  FakeContext c;
  c.Constant(1, model.begin() + data_at[1]);
  c.Constant(2, model.begin() + data_at[2]);
  const ModelInputs found =
      FindModelInputsIn(&c.context, model.begin(), model.end(), model.begin() + data_at[1]);
  ASSERT_TRUE(found.known) << found.why;
  EXPECT_EQ(found.constant_inputs, std::set<int>{1});
}

TEST(ModelInputs, ConstantsThatAreNotTheModelsBuffersAreUnknown) {
  size_t data_at[3] = {};
  const Guarded model(ThreeTensorModel(data_at));
  std::vector<uint8_t> elsewhere(16);
  FakeContext c;
  c.Constant(1, model.begin() + data_at[1]);
  c.Constant(2, elsewhere.data());  // e.g. a copy: this is not the context's model
  const ModelInputs found =
      FindModelInputsIn(&c.context, model.begin(), model.end(), model.begin() + data_at[1]);
  EXPECT_FALSE(found.known);
  EXPECT_NE(found.why, "");
}

TEST(ModelInputs, GarbageFullOfIdentifiersIsUnknownAndNoReadLeavesIt) {
  std::mt19937 rng(20);
  for (int round = 0; round < 50; ++round) {
    std::vector<uint8_t> bytes(256 + rng() % 4096);
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    // Small offsets, so that many of them land inside the buffer.
    for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
      if (rng() % 3 == 0) {
        const uint32_t small = rng() % 64;
        std::memcpy(&bytes[i], &small, 4);
      }
    }
    for (int k = 0; k < 40; ++k) {
      const size_t at = rng() % (bytes.size() - 8);
      std::memcpy(&bytes[at + 4], "TFL3", 4);
    }
    const Guarded memory(bytes);
    FakeContext c;
    c.Constant(1, memory.end() - 16);
    c.Constant(2, memory.end() - 32);
    const ModelInputs found =
        FindModelInputsIn(&c.context, memory.begin(), memory.end(), memory.end() - 32);
    EXPECT_FALSE(found.known) << "round " << round;
  }
}

TEST(ModelInputs, ATruncatedModelIsUnknownAndNoReadLeavesIt) {
  size_t data_at[3] = {};
  const std::vector<uint8_t> whole = ThreeTensorModel(data_at);
  for (size_t cut = 16; cut < data_at[1]; cut += 4) {
    const Guarded memory(std::vector<uint8_t>(whole.begin(), whole.begin() + cut));
    FakeContext c;
    c.Constant(1, memory.end() - 8);
    c.Constant(2, memory.end() - 4);
    const ModelInputs found =
        FindModelInputsIn(&c.context, memory.begin(), memory.end(), memory.end() - 8);
    EXPECT_FALSE(found.known) << "cut at " << cut;
  }
}

}  // namespace
}  // namespace tflite_gles
