"""ONNX export with the tensor names and dynamic axes of docs/model-contract.md (version 3).

The trained model (train.py, ensemble.py) and the test fixture (scripts/model/build-contract-model.py)
both export through here, so both state the contract's signature the same way. The trained graphs
then run their per-turn nodes only for calls that explain (onnx_gate.py); the fixture is left as
traced, so the service is tested on a contract graph without the gate too.
"""
import onnx
import torch

from onnx_gate import gate_per_turn

INPUT_NAMES = ["input_ids", "speaker_ids", "age_features", "turn_rows"]
OUTPUT_NAMES = ["harm_logit", "speaker_logits", "turn_harm_logits"]
DYNAMIC_AXES = {
    "input_ids": {0: "batch", 1: "turns", 2: "tokens"},
    "speaker_ids": {0: "batch", 1: "turns"},
    "age_features": {0: "batch"},
    "turn_rows": {0: "rows"},
    "harm_logit": {0: "batch"},
    "speaker_logits": {0: "batch"},
    "turn_harm_logits": {0: "rows", 1: "turns"},
}


def export_contract_onnx(model, path, vocab_size, opset=14, gate=True):
    """Traces `model(input_ids, speaker_ids, age_features, turn_rows)` on a padded dummy batch, gates
    its per-turn nodes unless `gate` is False, and checks the file."""
    model.eval()
    ids = torch.randint(1, vocab_size, (2, 5, 7))
    spk = torch.tensor([[1, 2, 1, 2, 1], [2, 1, 2, 0, 0]])
    ages = torch.zeros(2, 8)
    rows = torch.tensor([1])
    # dynamo=False: the TorchScript tracer, whose graph (dynamic axes, opset 14) is the contract's own and
    # byte-stable for a seed; torch 2.9 made the torch.export-based exporter the default.
    torch.onnx.export(
        model, (ids, spk, ages, rows), path, opset_version=opset, dynamo=False,
        input_names=INPUT_NAMES, output_names=OUTPUT_NAMES, dynamic_axes=DYNAMIC_AXES,
    )
    graph = onnx.load(path)
    if gate:
        onnx.save(gate_per_turn(graph), path)
    onnx.checker.check_model(graph)
