// The partition's side of the model-data cache (model_data_cache.h): which
// constants are cached, loading them before Allocate uploads, writing them
// after a conversion.
#include <cstdio>

#include "delegate/runtime/runtime.h"

namespace tflite_gles {

PartitionRuntime::ModelData PartitionRuntime::LoadModelData(size_t vec4_bytes) const {
  ModelData data;
  if (model_data_ == nullptr) return data;
  // The precision is part of what was converted (fp16 uploads are halves).
  data.key = std::string("fp16=") + (device_.fp16 ? "1" : "0");
  std::vector<size_t> sizes;
  for (size_t i = 0; i < values_.size(); ++i) {
    const Value& value = values_[i];
    if (value.kind != Value::Kind::kConstant || !value.lazy || value.storage_of >= 0 ||
        arena_offset_[i] != kOwnBuffer) {
      continue;
    }
    data.slot[i] = sizes.size();
    sizes.push_back(static_cast<size_t>(value.vec4_count()) * vec4_bytes);
    data.key += "\n" + value.lazy->key;
  }
  data.blobs.resize(sizes.size());
  if (sizes.empty()) return data;
  std::string why;
  switch (model_data_->Load(data.key, sizes, &data.blobs, &why)) {
    case ModelDataCache::LoadResult::kLoaded:
      data.loaded = true;
      model_data_->counts().loaded += static_cast<int>(sizes.size());
      break;
    case ModelDataCache::LoadResult::kRejected:
      ++model_data_->counts().rejected;
      std::fprintf(stderr,
                   "WARNING: tflite-gles: serialization cache model-data entry rejected, "
                   "converting the constants from the model: %s\n",
                   why.c_str());
      data.blobs.assign(sizes.size(), {});
      break;
    case ModelDataCache::LoadResult::kMissing:
      data.blobs.assign(sizes.size(), {});
      break;
  }
  return data;
}

void PartitionRuntime::StoreModelData(const ModelData& data) {
  if (model_data_ == nullptr || data.loaded || data.slot.empty()) return;
  model_data_->counts().converted += static_cast<int>(data.slot.size());
  Status stored = model_data_->Store(data.key, data.blobs);
  if (stored.ok()) {
    ++model_data_->counts().written;
  } else {
    // Only later starts lose; the program cache warns about the same folder.
    std::fprintf(stderr,
                 "WARNING: tflite-gles: cannot write a model-data entry to the "
                 "serialization cache: %s\n",
                 stored.message().c_str());
  }
}

}  // namespace tflite_gles
