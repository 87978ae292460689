// Constant weights written into a program's text as GLSL literals, so that
// each product's weight is an immediate operand of its FMA instead of a
// register loaded from shared memory or a buffer (NVIDIA's FFMA loops ran at
// 37-54 % of the fp32 peak with register operands, 95 % with literal ones;
// docs/perf/log.md, "peak, session 11" and "win7, session 18"). The program
// stays keyed by its full source in the program and serialization caches:
// the literals are part of that source.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "delegate/graph/graph.h"

namespace tflite_gles::kernels {

// The data of a constant of at most max_vec4 vec4s whose every value is
// finite (a lazy one is made now; the Value is left as it is), else nullopt.
std::optional<std::vector<float>> SmallConstantData(const Value& value, long long max_vec4);

// "vec4(a,b,c,d),vec4(...),...": `data` (a multiple of 4 floats) as the
// initializer list of a GLSL ES vec4 array; each float with 9 significant
// digits, which parse back to the same float; an inf or nan as its bits
// (uintBitsToFloat, still a constant expression).
std::string Vec4Literals(const std::vector<float>& data);

}  // namespace tflite_gles::kernels
