// The model-data half of the serialization cache: a partition's converted
// constants (weights packed in the layout their shaders read, in the
// precision they are stored in on the GPU) saved once, so that a later start
// uploads them without reading and repacking the model's tensors.
//
// One file per partition, `<token>-<32 hex>.tfgdata` in serialization_dir,
// the hex digits a ContentHash (delegate/graph/content_hash.h) of the
// identity and the key. The key lists every cached constant in order by its
// own key (GraphBuilder::NewLazyConstant: the packing recipe with all its
// parameters plus a 128-bit content hash of the TFLite tensor it reads:
// type, shape, bytes, quantization); the identity is the program cache's
// (library version, model token, driver) plus this library's build (its
// file's size and modification time: a rebuilt library never reads data a
// different build packed) and the storage precision. A changed model file
// changes a content hash and so the key: the entry is not found, never
// loaded stale. An entry is used only when identity and key equal the
// caller's byte for byte, its checksum (a ContentHash of the rest) matches
// and every blob has the size the caller expects; anything else is a
// rejection with a reason, and the caller converts and rewrites it. Writes
// go through a temporary file renamed into place (egl/program_binary_cache.h).
//
// Loading streams: the file is read in chunks of a small reused buffer,
// each chunk hashed for the checksum and handed to the caller (which copies
// it into its GPU buffer) while it is still in the CPU's cache. A 17 MB
// entry so costs one read and one copy into the driver, where reading it
// whole, checking it and copying its blobs out cost three passes and 34 MB
// of new pages (docs/perf/log.md, "cold2"). The price: the checksum is known
// only at the end, so on a rejection the sink may already have received
// bytes, and the caller must overwrite every blob.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "egl/status.h"

namespace tflite_gles {

struct ModelDataCounts {
  int loaded = 0;     // constants uploaded from entries
  int converted = 0;  // cacheable constants converted from the model
  int written = 0;    // entries written
  int rejected = 0;   // entries found but not used (warnings say why)
};

class ModelDataCache {
 public:
  // `directory` exists (the program cache checked it); `prefix` is the
  // sanitized token that starts file names.
  ModelDataCache(std::string directory, std::string prefix, std::string identity);

  enum class LoadResult { kLoaded, kMissing, kRejected };
  // Receives the entry's blobs piece by piece: `bytes` bytes of blob
  // `blob` (an index into `sizes`) starting at `offset` within it. A failed
  // sink ends the load as a rejection with its message.
  using Sink = std::function<Status(size_t blob, size_t offset, const uint8_t* data,
                                    size_t bytes)>;
  // Streams blob i (of exactly sizes[i] bytes) to `sink`. kLoaded only when
  // every check passed, the checksum last: after kRejected the sink may
  // have received any part of any blob. kMissing calls the sink never.
  // `chunk_bytes`: the size of the pieces (0: each blob whole, one sink
  // call per blob; DeviceProfile::model_data_chunk_bytes says which suits
  // which driver).
  LoadResult Load(const std::string& key, const std::vector<size_t>& sizes, const Sink& sink,
                  std::string* why, size_t chunk_bytes = size_t{256} << 10) const;
  Status Store(const std::string& key, const std::vector<std::vector<uint8_t>>& blobs) const;
  std::string EntryPath(const std::string& key) const;

  ModelDataCounts& counts() { return counts_; }
  const ModelDataCounts& counts() const { return counts_; }

 private:
  std::string directory_;
  std::string prefix_;
  std::string identity_;
  ModelDataCounts counts_;
};

}  // namespace tflite_gles
