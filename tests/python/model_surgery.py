"""Edits of real .tflite models through the flatbuffer object API, for the
hostile-model tests: load a model of ../shared/models, change one tensor,
buffer or operator, and pack it again (the result is passed to the
interpreter as model_content: a read-only mapped file cannot take
set_tensor on a tensor that carries a buffer)."""

from __future__ import annotations

from pathlib import Path

import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as schema

MODELS = Path(__file__).resolve().parents[2].parent / "shared" / "models"
FILE_IDENTIFIER = b"TFL3"


class Surgery:
    """One model being edited; `build()` gives the new model's bytes."""

    def __init__(self, name_or_bytes):
        data = name_or_bytes if isinstance(name_or_bytes, bytes) else \
            (MODELS / name_or_bytes).read_bytes()
        self.model = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(data, 0))
        self.graph = self.model.subgraphs[0]

    # --- lookups ---
    def tensor_index(self, name: str) -> int:
        for i, tensor in enumerate(self.graph.tensors):
            if tensor.name.decode() == name:
                return i
        raise KeyError(name)

    def tensor(self, name_or_index):
        index = name_or_index if isinstance(name_or_index, int) else \
            self.tensor_index(name_or_index)
        return self.graph.tensors[index]

    def op_name(self, op) -> str:
        code = self.model.operatorCodes[op.opcodeIndex]
        if code.customCode:
            return bytes(code.customCode).decode()
        names = {v: k for k, v in vars(schema.BuiltinOperator).items()
                 if not k.startswith("_")}
        return names[max(code.builtinCode, code.deprecatedBuiltinCode)]

    def operators(self, op_name: str) -> list:
        """Indices of the operators of one kind, in model order."""
        return [i for i, op in enumerate(self.graph.operators) if self.op_name(op) == op_name]

    def producer(self, tensor_index: int):
        for i, op in enumerate(self.graph.operators):
            if tensor_index in list(op.outputs):
                return i
        return None

    def consumers(self, tensor_index: int) -> list:
        return [i for i, op in enumerate(self.graph.operators) if tensor_index in list(op.inputs)]

    def buffer_data(self, tensor_index: int) -> bytes:
        buffer = self.model.buffers[self.graph.tensors[tensor_index].buffer]
        return bytes(bytearray(buffer.data)) if buffer.data is not None else b""

    # --- edits ---
    def give_buffer(self, tensor_index: int, data: np.ndarray) -> None:
        """Gives a tensor its own buffer holding `data` (raw bytes as they are)."""
        self.model.buffers.append(schema.BufferT())
        self.model.buffers[-1].data = np.frombuffer(np.ascontiguousarray(data).tobytes(),
                                                    np.uint8)
        self.graph.tensors[tensor_index].buffer = len(self.model.buffers) - 1

    def set_shape(self, tensor_index: int, shape) -> None:
        tensor = self.graph.tensors[tensor_index]
        tensor.shape = list(shape)
        if tensor.shapeSignature is not None:
            tensor.shapeSignature = list(shape)

    def set_type(self, tensor_index: int, tensor_type: int) -> None:
        self.graph.tensors[tensor_index].type = tensor_type

    def build(self) -> bytes:
        builder = flatbuffers.Builder(1 << 20)
        builder.Finish(self.model.Pack(builder), file_identifier=FILE_IDENTIFIER)
        return bytes(builder.Output())
