"""Rebuilds the members of a packaged ensemble (ensemble.py's model.onnx and the manifest beside it) as
train.py's member directories, so that a run may retrain one member and join it with the others as
shipped, without retraining them (train.sh --member-from).

  python3 scripts/train/rebuild_members.py --model models/conversation-risk --out DIR

Writes DIR/member-K (K = 1, 2, ...): model.pt, the member's folded network (one embedding table, the
float16 values the package stores), and training.json with the member's seed, options, chosen epoch
and calibration from the manifest, marked `folded` (ensemble.py then loads it as it is). Joining the
rebuilt members again exports the package's model.onnx byte for byte (test/model/training-rebuild-members.test.ts).

Which initializer holds which weight is not read from its name (most are `onnx::MatMul_N`, numbered by
the trace): a network of the same architecture is given distinct random weights and exported the way
ensemble.py exports, and each of its initializers is matched by value to the weight it came from,
as stored (the same, transposed, or a GRU's gates in ONNX's z, r, h order). The package's initializers
of the same names are then read back through the same maps; a package whose graph is not the probe's
(another architecture, another exporter) is refused.
"""
import argparse
import json
import os
import sys
import tempfile

import numpy as np
import onnx
import torch
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ensemble import TRAINING_OPTIONS  # noqa: E402
from model import ConversationRisk, Ensemble  # noqa: E402
from onnx_export import export_contract_onnx  # noqa: E402


def member_recipe(manifest, member):
    """A member's training options: its own where the manifest records them (members trained
    differently, package.ts), else the shared hyperparameters every member was trained with."""
    return member.get("recipe", manifest["training_data"]["hyperparameters"])


def member_networks(manifest, vocab_size):
    """One plain (folded), untrained network per member, with the architecture the manifest records."""
    ensemble = manifest["training_data"]["ensemble"]
    hp = manifest["training_data"]["hyperparameters"]
    nets = []
    for m in ensemble["members"]:
        r = member_recipe(manifest, m)
        nets.append(ConversationRisk(vocab_size, emb=hp["emb"], hidden=hp["hidden"], blind_reading=r.get("blind_reading", False),
                                     side_ages=r.get("side_ages", 0) > 0, harm_reads_sides=r.get("harm_reads_sides", False)))
    return nets


def gru_forms(gru):
    """ONNX's W, R and B of a one-layer PyTorch GRU: gates r, z, n reordered to z, r, h."""
    def reorder(w):
        r, z, n = w.chunk(3, 0)
        return torch.cat([z, r, n], 0)
    return {
        "W": reorder(gru.weight_ih_l0.detach())[None],
        "R": reorder(gru.weight_hh_l0.detach())[None],
        "B": torch.cat([reorder(gru.bias_ih_l0.detach()), reorder(gru.bias_hh_l0.detach())])[None],
    }


def export_graph(members, vocab_size):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.onnx")
        export_contract_onnx(Ensemble([m.folded(half_table=True) for m in members]).eval(), path, vocab_size)
        return onnx.load(path)


def probe_maps(members, vocab_size):
    """{initializer name: (member index, parameter name or GRU form, transposed)} from a probe export."""
    torch.manual_seed(12345)
    with torch.no_grad():
        for m in members:
            for p in m.parameters():
                p.copy_(torch.randn_like(p))
            m.tok.weight.copy_(m.tok.weight.half().float())
    graph = export_graph(members, vocab_size)
    candidates = []
    for k, m in enumerate(members):
        for name, p in m.state_dict().items():
            if name.startswith("gru."):
                continue
            candidates.append((k, name, False, p.detach().float().numpy()))
            if p.dim() == 2:
                candidates.append((k, name, True, p.detach().float().numpy().T))
        for form, value in gru_forms(m.gru).items():
            candidates.append((k, f"gru.{form}", False, value.numpy()))
    maps = {}
    for init in graph.graph.initializer:
        value = numpy_helper.to_array(init).astype(np.float32)
        hits = [(k, name, t) for k, name, t, c in candidates if c.shape == value.shape and np.array_equal(c, value)]
        if len(hits) != 1:
            raise SystemExit(f"probe: initializer {init.name} {list(value.shape)} matches {len(hits)} weights, not one")
        maps[init.name] = hits[0]
    return maps, graph


def same_structure(a, b):
    """The same nodes in the same order, and initializers of the same names and shapes."""
    ops = lambda g: [(n.op_type, tuple(n.input), tuple(n.output)) for n in g.graph.node]  # noqa: E731
    inits = lambda g: sorted((i.name, tuple(i.dims), i.data_type) for i in g.graph.initializer)  # noqa: E731
    return ops(a) == ops(b) and inits(a) == inits(b)


def rebuild(package_dir):
    """The package's members as folded networks, and the manifest's record of each."""
    with open(os.path.join(package_dir, "manifest.json")) as f:
        manifest = json.load(f)
    if not manifest.get("training_data", {}).get("ensemble"):
        raise SystemExit("the package is one network, not an ensemble: nothing to rebuild")
    package = onnx.load(os.path.join(package_dir, "model.onnx"))
    table = next((i for i in package.graph.initializer if i.name == "members.0.tok.weight"), None)
    if table is None:
        raise SystemExit("the package's graph has no members.0.tok.weight: not an ensemble.py export")
    vocab_size = table.dims[0]
    members = member_networks(manifest, vocab_size)
    maps, probe = probe_maps(members, vocab_size)
    if not same_structure(probe, package):
        raise SystemExit("the package's graph is not what this code exports for its architecture: no member rebuilt")
    values = {}
    for init in package.graph.initializer:
        k, name, transposed = maps[init.name]
        value = torch.from_numpy(numpy_helper.to_array(init).astype(np.float32).copy())
        value = value.T.contiguous() if transposed else value
        if (k, name) in values and not torch.equal(values[(k, name)], value):
            raise SystemExit(f"member {k + 1}: {name} is stored twice with different values")
        values[(k, name)] = value
    for k, m in enumerate(members):
        state = {}
        for name, p in m.state_dict().items():
            if name.startswith("gru."):
                continue
            if (k, name) not in values:
                raise SystemExit(f"member {k + 1}: {name} is in no initializer")
            state[name] = values[(k, name)].reshape(p.shape)
        hidden = m.gru.hidden_size
        for form, ours in (("W", "weight_ih_l0"), ("R", "weight_hh_l0")):
            z, r, n = values[(k, f"gru.{form}")][0].chunk(3, 0)
            state[f"gru.{ours}"] = torch.cat([r, z, n], 0)
        b = values[(k, "gru.B")][0]
        for half, ours in ((b[: 3 * hidden], "bias_ih_l0"), (b[3 * hidden:], "bias_hh_l0")):
            z, r, n = half.chunk(3, 0)
            state[f"gru.{ours}"] = torch.cat([r, z, n], 0)
        m.load_state_dict(state)
        m.eval()
    return members, manifest


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, help="a package directory: model.onnx and manifest.json of an ensemble")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    members, manifest = rebuild(args.model)
    td = manifest["training_data"]
    # The manifest's hyperparameters are the first member's: each member keeps their architecture and data
    # settings, and takes its own training options (a blind member has no side ages nor MiniLM's words).
    shared = {k: v for k, v in td["hyperparameters"].items() if k not in TRAINING_OPTIONS}
    for k, (m, record) in enumerate(zip(members, td["ensemble"]["members"])):
        out = os.path.join(args.out, f"member-{k + 1}")
        os.makedirs(out, exist_ok=True)
        torch.save(m.state_dict(), os.path.join(out, "model.pt"))
        hyperparameters = {**shared, **member_recipe(manifest, record), "seed": record["seed"]}
        with open(os.path.join(out, "training.json"), "w") as f:
            json.dump({
                "calibration": record["calibration"],
                "history": record.get("history", []),
                "selected_epoch": record["selected_epoch"],
                "hyperparameters": hyperparameters,
                "pretrained_vectors": td.get("pretrained_vectors", False),
                # Stored as the package holds it: one table, no pretrained path (ensemble.py load_member).
                "folded": True,
                # A package whose members' shares were fitted (ensemble.py --fit-weights) stores each member's
                # heads at M x its weight: the member is rebuilt so (its own calibration is of the unweighed
                # one), and ensemble.py reads the factor back to fit and weigh it as the package did.
                **({"heads_scaled_by": len(members) * record["weight"]} if "weight" in record else {}),
                "rebuilt_from": {"model": manifest["name"], "version": manifest["version"], "sha256": manifest["files"]["model.onnx"]["sha256"]},
                "conversations": td["conversations_used"],
                "torch": torch.__version__,
            }, f, indent=2)
        print(out)


if __name__ == "__main__":
    main()
