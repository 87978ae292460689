"""Runs the probe delegate (probe.cc) on a model with a plain graph input, a
graph input [4] with a buffer read by SUB, a constant [4] read by ADD and a
graph input [4] with a buffer as a CONV_2D bias; sets every input and invokes
once. Usage: python run_probe.py /path/to/libprobe.so (either runtime)."""

import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "tools")]
from tflite_builder import ModelBuilder  # noqa: E402
from tflite_runtimes import RUNTIME, Interpreter, load_delegate, schema  # noqa: E402


def give_buffer(b, index, value):
    b._buffers.append(schema.BufferT())
    b._buffers[-1].data = np.frombuffer(
        np.full(b._tensors[index].shape, value, np.float32).tobytes(), np.uint8)
    b._tensors[index].buffer = len(b._buffers) - 1


b = ModelBuilder()
x = b.add_input([1, 2, 2, 4])
y = b.add_input([4])
c = b.add_const(np.full([4], 0.5, np.float32))
w = b.add_const(np.eye(4, dtype=np.float32).reshape(4, 1, 1, 4))
bias = b.add_input([4])
t1, t2, o = (b.add_tensor([1, 2, 2, 4]) for _ in range(3))
b.add_op("SUB", [x, y], [t1], {"fused_activation_function": "NONE"})
b.add_op("ADD", [t1, c], [t2], {"fused_activation_function": "NONE"})
b.add_op("CONV_2D", [t2, w, bias], [o], {"padding": "VALID", "stride_w": 1, "stride_h": 1})
give_buffer(b, y, 0.25)
give_buffer(b, bias, 0.125)
print(f"runtime {RUNTIME}; tensors: x {x}, y {y} (input, buffer), c {c} (constant), "
      f"w {w}, bias {bias} (input, buffer)", flush=True)
interp = Interpreter(model_content=b.build(),
                     experimental_delegates=[load_delegate(sys.argv[1])])
print("graph inputs per the interpreter:",
      [d["index"] for d in interp.get_input_details()], flush=True)
interp.allocate_tensors()
for detail in interp.get_input_details():
    interp.set_tensor(detail["index"], np.full(detail["shape"], 3.0, np.float32))
interp.invoke()
