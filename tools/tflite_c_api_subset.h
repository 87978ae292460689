/* The part of TensorFlow Lite's stable C API (tensorflow/lite/c/c_api.h)
 * that tools/cpp_example.cc calls, declared in our own words.
 *
 * No library on this machine exports that API: ai-edge-litert's libLiteRt.so
 * exports only the LiteRt* CompiledModel API, and its Python extension keeps
 * the interpreter's symbols hidden (docs/cpp_usage.md). So CI compiles the
 * example against these declarations, which restate the documented
 * signatures; with a real TFLite build the example includes the real header
 * instead and links against libtensorflowlite_c. */
#ifndef TFLITE_GLES_TOOLS_TFLITE_C_API_SUBSET_H_
#define TFLITE_GLES_TOOLS_TFLITE_C_API_SUBSET_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TfLiteModel TfLiteModel;
typedef struct TfLiteInterpreterOptions TfLiteInterpreterOptions;
typedef struct TfLiteInterpreter TfLiteInterpreter;
typedef struct TfLiteTensor TfLiteTensor;
struct TfLiteDelegate;

/* Values as in TFLite's c_api_types.h. */
typedef enum { kTfLiteOk = 0, kTfLiteError = 1 } TfLiteStatus;
typedef enum { kTfLiteNoType = 0, kTfLiteFloat32 = 1 } TfLiteType;

TfLiteModel* TfLiteModelCreateFromFile(const char* model_path);
void TfLiteModelDelete(TfLiteModel* model);

TfLiteInterpreterOptions* TfLiteInterpreterOptionsCreate(void);
void TfLiteInterpreterOptionsDelete(TfLiteInterpreterOptions* options);
void TfLiteInterpreterOptionsSetNumThreads(TfLiteInterpreterOptions* options,
                                           int32_t num_threads);
void TfLiteInterpreterOptionsAddDelegate(TfLiteInterpreterOptions* options,
                                         struct TfLiteDelegate* delegate);

TfLiteInterpreter* TfLiteInterpreterCreate(const TfLiteModel* model,
                                           const TfLiteInterpreterOptions* options);
void TfLiteInterpreterDelete(TfLiteInterpreter* interpreter);
TfLiteStatus TfLiteInterpreterAllocateTensors(TfLiteInterpreter* interpreter);
TfLiteStatus TfLiteInterpreterInvoke(TfLiteInterpreter* interpreter);
int32_t TfLiteInterpreterGetInputTensorCount(const TfLiteInterpreter* interpreter);
TfLiteTensor* TfLiteInterpreterGetInputTensor(const TfLiteInterpreter* interpreter,
                                              int32_t input_index);
int32_t TfLiteInterpreterGetOutputTensorCount(const TfLiteInterpreter* interpreter);
const TfLiteTensor* TfLiteInterpreterGetOutputTensor(const TfLiteInterpreter* interpreter,
                                                     int32_t output_index);

TfLiteType TfLiteTensorType(const TfLiteTensor* tensor);
int32_t TfLiteTensorNumDims(const TfLiteTensor* tensor);
int32_t TfLiteTensorDim(const TfLiteTensor* tensor, int32_t dim_index);
size_t TfLiteTensorByteSize(const TfLiteTensor* tensor);
const char* TfLiteTensorName(const TfLiteTensor* tensor);
TfLiteStatus TfLiteTensorCopyFromBuffer(TfLiteTensor* tensor, const void* input_data,
                                        size_t input_data_size);
TfLiteStatus TfLiteTensorCopyToBuffer(const TfLiteTensor* tensor, void* output_data,
                                      size_t output_data_size);

#ifdef __cplusplus
}
#endif

#endif /* TFLITE_GLES_TOOLS_TFLITE_C_API_SUBSET_H_ */
