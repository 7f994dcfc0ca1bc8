"""Runs the per-turn nodes of a contract graph only when a call asks for them.

The running score (`turn_harm_logits`, docs/model-contract.md) is read only by explanations, and a
call that does not explain passes an empty `turn_rows`. The traced graph still holds every node of the
running path (the prefix scans of each pooling, the heads on every piece): onnxruntime runs them on
empty tensors, and at a few microseconds each they were about a tenth of a plain run of the shipped
pair (December 3, onnxruntime alone, the bench's 40-turn chats; docs/training.md, "The running
score's nodes run only when a call explains").
`gate_per_turn` moves the nodes that feed only that output into the `then` branch of an `If` on
`Size(turn_rows) > 0`, whose `else` branch gives the empty [0, turns] tensor those nodes gave. The
nodes, their order and their weights are unchanged, so every output is the same to the bit.

Usage: .venv/bin/python scripts/train/onnx_gate.py IN.onnx OUT.onnx   (a graph exported before the gate)
"""
import sys

import onnx
from onnx import TensorProto, helper

PER_TURN = "turn_harm_logits"
PREFIX = "per_turn_gate/"


def _producers(graph):
    return {name: i for i, node in enumerate(graph.node) for name in node.output}


def _reads(node):
    """The values a node reads: its inputs, and every name its subgraphs (If, Loop, Scan bodies) use
    without producing it, which may come from the outer graph."""
    names = [name for name in node.input if name]
    for attr in node.attribute:
        for body in ([attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)):
            made = {i.name for i in body.input} | {t.name for t in body.initializer}
            for inner in body.node:
                names.extend(n for n in _reads(inner) if n not in made)
                made.update(inner.output)
    return names


def is_gated(model):
    """Whether the per-turn output already comes from the gate's If."""
    graph = model.graph
    i = _producers(graph).get(PER_TURN)
    return i is not None and graph.node[i].op_type == "If"


def gate_per_turn(model):
    """Rewrites `model` (an onnx.ModelProto of the contract) in place and returns it; a gated graph is returned as it is."""
    if is_gated(model):
        return model
    graph = model.graph
    if PER_TURN not in {o.name for o in graph.output}:
        raise ValueError(f"the graph has no {PER_TURN} output: no contract graph")
    producers = _producers(graph)
    # Every node that an output other than the running score needs, followed back to the inputs,
    # through what the bodies of control-flow nodes read from the outer graph too.
    needed = set()
    stack = [o.name for o in graph.output if o.name != PER_TURN]
    while stack:
        i = producers.get(stack.pop())
        if i is not None and i not in needed:
            needed.add(i)
            stack.extend(_reads(graph.node[i]))
    main = [node for i, node in enumerate(graph.node) if i in needed]
    per_turn = [node for i, node in enumerate(graph.node) if i not in needed]
    if producers.get(PER_TURN) in needed:
        raise ValueError(f"the node that gives {PER_TURN} is needed by the other outputs too: nothing to gate")
    if not per_turn:
        raise ValueError(f"no node feeds {PER_TURN} alone: nothing to gate")
    inner_names = {name for node in per_turn for name in node.output}

    # Inside the branch the output gets a name of its own, so that no name is both a subgraph's and the outer graph's.
    inner_out = PREFIX + PER_TURN
    for node in per_turn:
        node.output[:] = [inner_out if name == PER_TURN else name for name in node.output]
    declared = next(o for o in graph.output if o.name == PER_TURN)
    then_out = onnx.ValueInfoProto()
    then_out.CopyFrom(declared)
    then_out.name = inner_out
    then_branch = helper.make_graph(per_turn, "per_turn", [], [then_out])
    # Shapes onnx or the exporter inferred for values now inside the branch move with them.
    moved = [vi for vi in graph.value_info if vi.name in inner_names and vi.name != PER_TURN]
    then_branch.value_info.extend(moved)
    kept = [vi for vi in graph.value_info if vi.name not in inner_names]
    del graph.value_info[:]
    graph.value_info.extend(kept)

    def const(name, dtype, dims, values):
        return helper.make_node("Constant", [], [PREFIX + name], name=PREFIX + name, value=helper.make_tensor(PREFIX + name, dtype, dims, values))

    # What the ungated nodes give when no row is asked: float32 [0, turns], turns from speaker_ids.
    none_out = PREFIX + "none"
    else_branch = helper.make_graph(
        [
            helper.make_node("Shape", ["speaker_ids"], [PREFIX + "speaker_shape"]),
            const("one", TensorProto.INT64, [1], [1]),
            const("two", TensorProto.INT64, [1], [2]),
            const("no_rows", TensorProto.INT64, [1], [0]),
            helper.make_node("Slice", [PREFIX + "speaker_shape", PREFIX + "one", PREFIX + "two"], [PREFIX + "turns"]),
            helper.make_node("Concat", [PREFIX + "no_rows", PREFIX + "turns"], [PREFIX + "empty_shape"], axis=0),
            helper.make_node("ConstantOfShape", [PREFIX + "empty_shape"], [none_out],
                             value=helper.make_tensor(PREFIX + "zero", TensorProto.FLOAT, [1], [0.0])),
        ],
        "no_rows",
        [],
        [helper.make_tensor_value_info(none_out, TensorProto.FLOAT, ["rows", "turns"])],
    )
    gate = [
        helper.make_node("Size", ["turn_rows"], [PREFIX + "rows"], name=PREFIX + "size"),
        const("zero_rows", TensorProto.INT64, [], [0]),
        helper.make_node("Greater", [PREFIX + "rows", PREFIX + "zero_rows"], [PREFIX + "any_rows"], name=PREFIX + "greater"),
        helper.make_node("If", [PREFIX + "any_rows"], [PER_TURN], name=PREFIX + "if",
                         then_branch=then_branch, else_branch=else_branch),
    ]
    del graph.node[:]
    graph.node.extend(main + gate)
    return model


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    m = onnx.load(sys.argv[1])
    gate_per_turn(m)
    onnx.checker.check_model(m)
    onnx.save(m, sys.argv[2])
