// Epilogue fusion: an elementwise dispatch whose input is the output of a
// convolution (conv2d.comp: CONV_2D, FULLY_CONNECTED; depthwise_conv2d.comp)
// that nothing else reads is merged into that convolution's store, saving a
// dispatch and a full write + read of the tensor.
//
// The pass runs over a partition's dispatches after the kernels built them
// and before the runtime compiles them (PartitionRuntime::Create). It works
// on dispatches rather than TFLite nodes because the kernels have already
// resolved what the fusion needs: which Value each dispatch reads and
// writes, the elementwise op and activation (its defines) and the broadcast
// shape of the second operand.
//
// What fuses (everything else is left as it was):
//  - producer: a conv2d / gemm / depthwise_conv2d / transpose_conv dispatch
//    (its own fused ReLU-family activation stays and runs first), a concat
//    one that writes its whole output (concat_producers), an elementwise one
//    (its own op runs first: chains like x * scale + offset), or a mean /
//    channel_normalize one (unary steps and literal operands only: they have
//    no operand binding);
//  - consumer: an elementwise dispatch with the producer's output as one
//    input, of the same shape as its output, not splatted;
//  - the consumer's binary step (ADD SUB MUL DIV MAXIMUM MINIMUM, and PRELU
//    with alpha as the operand; either operand order) with a second operand of the output's shape, a
//    per-channel vector (1x1x1xC) or a scalar literal, and/or its unary step
//    (RELU RELU6 RELU_N1_TO_1 RELU_0_TO_1 TANH LOGISTIC HARD_SWISH
//    LEAKY_RELU ABS NEG SQUARE EXP ELU, and the quantization simulator's
//    OP_FAKE_QUANT and OP_QUANT_CLAMP);
//  - the producer's output is read by no other dispatch, is no partition
//    output, no write-back and has no view;
//  - at most one extra tensor operand per producer (one more binding), and at
//    most kMaxEpilogueSteps consumers folded into one producer.
// The fused dispatch takes the consumer's place in the order (every input of
// the producer is ready by then), writes the consumer's output, and carries
// the expression in the define EPILOGUE(x,index,slice) (x: the producer's
// activated result; index: the PHWC4 vec4 index; slice: the channel slice).
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles {

constexpr int kMaxEpilogueSteps = 4;

// The define the fused shaders expand at their store; the shaders' default
// (no fusion) is the identity.
constexpr char kEpilogueDefine[] = "EPILOGUE(x,index,slice)";
// A depthwise epilogue carried into the prologue of the GEMM it fuses into
// (delegate/passes/dw_fusion.h; gemm.comp, gemm_dw_splitk.comp).
constexpr char kDwEpilogueDefine[] = "DW_EPILOGUE(x)";
// A mean's / softmax's unary epilogue carried into the GEMM they fuse into
// (delegate/passes/dw_fusion.h; gemm.comp MEAN_PROLOGUE, SOFTMAX_EPILOGUE).
constexpr char kMeanEpilogueDefine[] = "MEAN_EPILOGUE(x)";
constexpr char kSoftmaxOutEpilogueDefine[] = "SOFTMAX_OUT_EPILOGUE(x)";

// Fuses in place; returns how many consumer dispatches were folded away.
// `values` are the partition's Values (shapes, kinds, views); `keep` lists
// Values that must stay materialized besides partition outputs (e.g.
// write-back sources).
// `elementwise_producers` false: only convolutions take epilogues
// (DeviceProfile::fuse_elementwise_chains). An epilogue with a tensor
// operand is left unfused where it would make the producer bind more than
// `max_dispatch_buffers` buffers (DeviceProfile::max_dispatch_buffers).
// `second_operand`: an elementwise binary producer with a tensor B, or a
// tiled GEMM, that already has its epilogue operand may take a second one
// (elementwise.comp / gemm.comp EPILOGUE_IN2; DeviceProfile::epilogue_second_operand).
// `concat_producers`: a concat.comp dispatch that writes its whole output
// takes them too (its operand after its inputs; DeviceProfile::fuse_concat_epilogues).
int FuseEpilogues(const std::vector<Value>& values,
                  const std::vector<ValueId>& keep,
                  std::vector<Dispatch>* dispatches,
                  bool elementwise_producers = true,
                  int max_dispatch_buffers = 1 << 20,
                  bool second_operand = false, bool concat_producers = false);

// Drops the dispatches marked in `removed` (one flag each), keeping the
// order of the rest: the last step of every fusion pass.
void EraseRemoved(const std::vector<bool>& removed, std::vector<Dispatch>* dispatches);

// Per Value, whether a fusion must leave it in memory: the roots of
// partition outputs and of `keep` (write-back sources), and with
// `viewed_roots` every Value a view reads or writes through (passes that
// match a tensor by its own id, not by the reads of its views).
std::vector<bool> PinnedValues(const std::vector<Value>& values,
                               const std::vector<ValueId>& keep, bool viewed_roots);

// An elementwise.comp dispatch's own op as a GLSL expression: its binary
// step of `a` and `b` (empty `b`: no binary step), then its unary step
// (fused activation or unary op), as shaders/elementwise.comp computes it;
// nullopt for a step that does not fuse (POW, PRELU, SQRT, ...). The
// prologue fusions use it (delegate/passes/prologue_fusion.h).
std::optional<std::string> ElementwiseExpression(const Dispatch& dispatch,
                                                 const std::string& a,
                                                 const std::string& b);

// `text` with every `from` replaced by `to` (an epilogue's or prologue's
// GLSL text moved onto other operand names; the passes' tile strings).
std::string Replaced(std::string text, const std::string& from, const std::string& to);

struct DispatchScan;  // delegate/passes/dispatch_scan.h

// The last step of a producer -> consumer fold (the prologue and head
// fusions): the consumer's label and flops take the producer's, which is
// marked removed in `scan`. Returns 1, what the caller's count adds.
int AbsorbProducer(DispatchScan& scan, int producer, Dispatch* consumer);
// The same for a pass that keeps its own removed marks (pool_fusion).
int AbsorbProducer(const Dispatch& producer, size_t index, std::vector<bool>* removed,
                   Dispatch* consumer);

// An integer define of a dispatch (the kernels write them as decimal text),
// -1 if absent or not an integer: how the passes read a dispatch's shape.
long long IntDefine(const Dispatch& dispatch, const char* name);

// Those of `names` that the dispatch defines, with their values: what a pass that moves a
// dispatch to another shader carries over (passes/window_conv.h, passes/upsample_conv.h).
std::map<std::string, std::string> KeptDefines(const Dispatch& dispatch,
                                               std::initializer_list<const char*> names);

// Whether a dispatch sets the define (a feature flag such as GENERIC).
inline bool HasDefine(const Dispatch& dispatch, const char* name) {
  return dispatch.defines.count(name) != 0;
}

// The one dispatch, among those not yet removed, that reads `root`'s
// storage (views included); -1 where none or several read it, or the one
// binding is read-write. The folds of a producer into its reader's gather
// (mirror pad, nearest upsampling, norm apply) take only such a producer.
int SoleReader(const std::vector<Value>& values, const std::vector<Dispatch>& list,
               const std::vector<bool>& removed, ValueId root);

}  // namespace tflite_gles
