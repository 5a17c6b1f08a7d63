"""`referee-lab expose-features`: give a square classifier a second output, `features`, the
activations that feed its final linear layer (float32, one row a crop), so that the referee
can fit a small head of its own on them (`referee/vision/adapt.py`, `referee calibrate
pieces`) without a second network.

The final layer is found from the graph's end: `Softmax` ← (`DequantizeLinear` ←) `Gemm`
(float) or `QGemm` (int8). A float model's features are the Gemm's input as it is; an int8
model's are its uint8 input dequantised with the QGemm's own input scale and zero point, so
both read in the same units as the layer the model was trained with. The step is idempotent
(a model that has the output is left byte for byte) and writes the new sha256 into the card.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.errors import ModelError
from referee.vision.classifier import FEATURES_OUTPUT, resolve_model, sha256_of

PROBABILITIES = "probabilities"


@dataclass(frozen=True)
class Exposed:
    """What the step did to one model."""

    onnx_path: Path
    sha256: str
    width: int  # features a crop
    changed: bool  # False: the model had the output already


def expose_features(name_or_path: str | Path) -> Exposed:
    """Add the `features` output to a model (a name in the models folder or a path) and its
    card's sha256; a model that has it is left as it is."""
    import onnx

    onnx_path, card_path = resolve_model(name_or_path)
    if not onnx_path.is_file() or not card_path.is_file():
        raise ModelError(f"{onnx_path}: model or card not found")
    model = onnx.load(str(onnx_path))
    graph = model.graph
    width = _feature_width(graph)
    if any(output.name == FEATURES_OUTPUT for output in graph.output):
        return Exposed(onnx_path, sha256_of(onnx_path), width, changed=False)
    graph.node.extend(_feature_nodes(graph))
    graph.output.append(onnx.helper.make_tensor_value_info(
        FEATURES_OUTPUT, onnx.TensorProto.FLOAT, [_batch_dim(graph), width]))
    onnx.checker.check_model(model)
    onnx.save(model, str(onnx_path))
    sha = sha256_of(onnx_path)
    _write_sha(card_path, sha)
    return Exposed(onnx_path, sha, width, changed=True)


def _final_layer(graph: Any) -> Any:
    """The Gemm or QGemm whose output becomes the probabilities (through a dequantisation)."""
    producers = {out: node for node in graph.node for out in node.output}
    node = producers.get(PROBABILITIES)
    if node is None or node.op_type != "Softmax":
        raise ModelError(f"{graph.name}: the probabilities are not a Softmax's output")
    node = producers.get(node.input[0])
    if node is not None and node.op_type == "DequantizeLinear":
        node = producers.get(node.input[0])
    if node is None or node.op_type not in ("Gemm", "QGemm"):
        raise ModelError(f"{graph.name}: no Gemm or QGemm feeds the Softmax")
    if any(a.name == "transA" and a.i for a in node.attribute):
        raise ModelError(f"{graph.name}: a final layer with transA is not supported")
    return node


def _feature_nodes(graph: Any) -> list[Any]:
    import onnx

    layer = _final_layer(graph)
    if layer.op_type == "Gemm":
        return [onnx.helper.make_node("Identity", [layer.input[0]], [FEATURES_OUTPUT],
                                      name="features_out")]
    # QGemm(A, a_scale, a_zero_point, B, ...): A dequantised as the layer reads it
    return [onnx.helper.make_node("DequantizeLinear", list(layer.input[:3]), [FEATURES_OUTPUT],
                                  name="features_out")]


def _feature_width(graph: Any) -> int:
    """The final layer's input width, from its weight's shape (rows: classes when transB)."""
    from onnx import numpy_helper

    layer = _final_layer(graph)
    weight_name = layer.input[1] if layer.op_type == "Gemm" else layer.input[3]
    weights = {init.name: init for init in graph.initializer}
    if weight_name not in weights:
        raise ModelError(f"{graph.name}: the final layer's weight is not a constant")
    shape = numpy_helper.to_array(weights[weight_name]).shape
    trans_b = any(a.name == "transB" and a.i for a in layer.attribute)
    return int(shape[1] if trans_b else shape[0])


def _batch_dim(graph: Any) -> str | int:
    dim = graph.output[0].type.tensor_type.shape.dim[0]
    return dim.dim_param or dim.dim_value or "N"


def _write_sha(card_path: Path, sha: str) -> None:
    data = json.loads(card_path.read_text(encoding="utf-8"))
    data["onnx"]["sha256"] = sha
    card_path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
