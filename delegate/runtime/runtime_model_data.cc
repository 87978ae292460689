// The partition's side of the model-data cache (model_data_cache.h): which
// constants are cached, filling their buffers from an entry or by
// converting them, writing an entry after a conversion.
#include <cstdio>

#include "delegate/abi/half.h"
#include "delegate/runtime/runtime.h"
#include "egl/init_phases.h"

namespace tflite_gles {

const void* PartitionRuntime::ConstantUploadBytes(Value& value,
                                                  std::vector<uint16_t>* halves) const {
  MaterializeConstant(value);  // no-op unless it was lazy
  if (!device_.fp16) return value.constant_data.data();
  halves->resize(value.constant_data.size());
  for (size_t k = 0; k < halves->size(); ++k) {
    (*halves)[k] = FloatToHalf(value.constant_data[k]);
  }
  return halves->data();
}

PartitionRuntime::ModelData PartitionRuntime::PlanModelData(size_t vec4_bytes) const {
  ModelData data;
  if (model_data_ == nullptr) return data;
  // The precision is part of what was converted (fp16 uploads are halves).
  data.key = std::string("fp16=") + (device_.fp16 ? "1" : "0");
  for (size_t i = 0; i < values_.size(); ++i) {
    const Value& value = values_[i];
    if (value.kind != Value::Kind::kConstant || !value.lazy || value.storage_of >= 0 ||
        arena_offset_[i] != kOwnBuffer) {
      continue;
    }
    data.slot[i] = data.sizes.size();
    data.value_of.push_back(i);
    data.sizes.push_back(static_cast<size_t>(value.vec4_count()) * vec4_bytes);
    data.key += "\n" + value.lazy->key;
  }
  return data;
}

Status PartitionRuntime::UploadModelData(ModelData* data) {
  if (data->sizes.empty()) return Status::Ok();
  gl::ScopedInitPhase timed(gl::InitPhase::kModelData);
  std::string why;
  auto sink = [this, data](size_t blob, size_t offset, const uint8_t* bytes, size_t count) {
    return buffers_[data->value_of[blob]].Upload(offset, count, bytes);
  };
  switch (model_data_->Load(data->key, data->sizes, sink, &why,
                            device_.model_data_chunk_bytes)) {
    case ModelDataCache::LoadResult::kLoaded:
      data->loaded = true;
      model_data_->counts().loaded += static_cast<int>(data->sizes.size());
      return Status::Ok();
    case ModelDataCache::LoadResult::kRejected:
      ++model_data_->counts().rejected;
      std::fprintf(stderr,
                   "WARNING: tflite-gles: serialization cache model-data entry rejected, "
                   "converting the constants from the model: %s\n",
                   why.c_str());
      break;
    case ModelDataCache::LoadResult::kMissing:
      break;
  }
  // Converted, uploaded over whatever a rejected entry sent, kept to store.
  data->blobs.assign(data->sizes.size(), {});
  for (size_t blob = 0; blob < data->sizes.size(); ++blob) {
    const size_t id = data->value_of[blob];
    std::vector<uint16_t> halves;
    const auto* begin =
        static_cast<const uint8_t*>(ConstantUploadBytes(values_[id], &halves));
    TFG_RETURN_IF_ERROR(buffers_[id].Upload(0, data->sizes[blob], begin));
    data->blobs[blob].assign(begin, begin + data->sizes[blob]);
  }
  return Status::Ok();
}

void PartitionRuntime::StoreModelData(const ModelData& data) {
  if (model_data_ == nullptr || data.loaded || data.sizes.empty()) return;
  gl::ScopedInitPhase timed(gl::InitPhase::kModelData);
  model_data_->counts().converted += static_cast<int>(data.sizes.size());
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
