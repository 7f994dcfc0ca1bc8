#!/usr/bin/env bash
# The ablation behind the model card's table: the shipped recipe, then one change left out per row,
# each trained from scratch at a reduced scale (8,000 generated chats, 5 epochs) and every row
# evaluated on the SAME test split, the shipped model's full corpus (.tmp/train/corpus.jsonl, which
# `npm run train` writes; built here if absent), so the rows differ only in what the model learned from.
#
#   bash scripts/train/ablation.sh [--epochs 5] [--n 8000] [--rows "full wordpiece no-register ..."]
#
# Writes .tmp/ablation/<row>/ (package and eval.json) and reports/ablation.md. A row takes about three
# minutes on 2 cores, the whole table about twenty.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
EPOCHS=5; N=8000; ROWS="full finetuned wordpiece no-register no-flat-excerpts-recut no-long-inkind-hardneg no-new-real no-hosted all-off"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --epochs) EPOCHS="$2"; shift 2 ;;
    --n) N="$2"; shift 2 ;;
    --rows) ROWS="$2"; shift 2 ;;
    *) echo "ablation.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
BASE="$ROOT/.tmp/ablation"; mkdir -p "$BASE" "$ROOT/reports"

# label and train.sh arguments of each row
declare -A LABEL ARGS
LABEL[full]="3.4.0's recipe (one member, no errand chats): hybrid vocabulary, frozen pretrained vectors, all data changes"; ARGS[full]=""
LABEL[wordpiece]="WordPiece from scratch (no pretrained vectors), all data changes"; ARGS[wordpiece]="--vocab wordpiece"
LABEL[finetuned]="hybrid vocabulary, pretrained vectors fine-tuned (a learned correction per word)"; ARGS[finetuned]="--pretrained-residual"
LABEL[no-register]="without chat register (register, register-shift)"; ARGS[no-register]="--without register,registerShift"
LABEL[no-flat-excerpts-recut]="without flat renderings, excerpts and re-cuts"; ARGS[no-flat-excerpts-recut]="--without flat,excerpts,recut"
LABEL[no-long-inkind-hardneg]="without long chats, in-kind replies and new hard negatives"; ARGS[no-long-inkind-hardneg]="--without long,inKind,hardNegatives,short"
LABEL[no-new-real]="without CaSiNo and Self-dialogue"; ARGS[no-new-real]="--without newRealSets"
LABEL[no-hosted]="without exchanges hosted in real chats"; ARGS[no-hosted]="--without hosted"
LABEL[all-off]="all data changes off, WordPiece from scratch (model 1.1.0's recipe)"; ARGS[all-off]="--vocab wordpiece --without register,registerShift,flat,excerpts,recut,long,inKind,hardNegatives,short,newRealSets,hosted"

# The common test split: the shipped recipe's full corpus.
COMMON="$ROOT/.tmp/train/corpus.jsonl"
[[ -f "$COMMON" ]] || node scripts/data/corpus.ts --out "$COMMON"
row_args=()
for row in $ROWS; do
  [[ -n "${LABEL[$row]:-}" ]] || { echo "ablation.sh: unknown row $row" >&2; exit 2; }
  dir="$BASE/$row"
  if [[ ! -f "$dir/model/manifest.json" ]]; then
    # 3.3.0's recipe: one network per row, without the errand chats and the later slices (the corpus
    # the documented rows were measured on): the rows compare data and vocabulary, and a second member
    # would double every row's time.
    # shellcheck disable=SC2086
    bash scripts/train/train.sh --no-eval --recipe 3.3.0 --epochs "$EPOCHS" --n "$N" --version "0.0.0-ablation-$row" --work "$dir/work" --out "$dir/model" ${ARGS[$row]} > "$dir.log" 2>&1
  fi
  [[ -f "$dir/eval/eval.json" ]] || node scripts/eval/run.ts --model "$dir/model" --corpus "$COMMON" --out "$dir/eval" --quick --no-card --no-manifest --no-plots > "$dir/eval.log" 2>&1
  row_args+=(--row "${LABEL[$row]}=$dir/eval/eval.json")
done
node scripts/eval/ablation.ts "${row_args[@]}" --out reports/ablation.md
echo "reports/ablation.md"
