#!/usr/bin/env bash
# Issue 55's lever (docs/results.md, "What worked"): a clone of a large dataset against the 200k clone.
#
#   control: ppo_default as it is: 200k decisions of the heuristic playing now, in memory, 4 epochs
#   lever:   ppo_default cloning a recorded heuristic self-play dataset instead, streamed
#            (bc_stream), labelled by the all-seeing teacher (bc_teacher: oracle:defend), 1 epoch
# then the same PPO steps from each clone (--deterministic, seed 1), and both checkpoints, the clone
# alone ("before", bc.pt) and the last ("after", latest.pt), paired on the same walls
# (oracle_ablation.py: the first is the control; each also against heuristic).
#
#   benchmarks/studies/clone_lever.sh                 # the sizes of the measured row
#   DECISIONS=20000000 HANDS=820000 benchmarks/studies/clone_lever.sh   # the issue's 20 M
#
# Sizes (environment): HANDS dataset hands (24.5 decisions each), DECISIONS the lever's
# bc_decisions, STEPS PPO env steps of each run, SEEDS / EVAL_HANDS the paired walls, OUT where
# everything goes (keep it out of the checkout), JOBS 1 to train the two runs one after the other.
set -euo pipefail
HANDS=${HANDS:-200000}
DECISIONS=${DECISIONS:-1000000}
STEPS=${STEPS:-1000000}
SEEDS=${SEEDS:-"4041 5051 6061"}
EVAL_HANDS=${EVAL_HANDS:-4000}
OUT=${OUT:-/root/lever55}
JOBS=${JOBS:-2}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
DATA="$OUT/heuristic-$HANDS"
RUNS="$OUT/runs"
mkdir -p "$OUT" "$RUNS"

# 1. the dataset (the same command writes the same dataset; a killed one resumes)
fzmj-data collect --agents heuristic --hands "$HANDS" --workers 2 --out "$DATA"

# 2. the two clones (each a run of one PPO update, whose checkpoints/bc.pt is the clone), then the
#    same PPO steps from each clone (bc_checkpoint: it is also the KL pull's teacher)
common=(--deterministic --no-progress --set runs_dir="$RUNS" --set seed=1)
train() {  # NAME, extra --set arguments
  local name=$1
  shift
  fzmj-train "${common[@]}" --set run_name="$name" "$@" > "$OUT/$name.log" 2>&1
}
clone_and_ppo() {  # NAME, the clone's --set arguments
  local name=$1
  shift
  train "$name" --set total_timesteps=16384 "$@"
  train "${name}_ppo" --set total_timesteps="$STEPS" --set bc_checkpoint="$RUNS/$name/checkpoints/bc.pt"
}
lever=(--set bc_dataset="$DATA" --set bc_stream=true --set bc_decisions="$DECISIONS"
  --set bc_teacher=oracle:defend --set bc_epochs=1)
if [ "$JOBS" = 1 ]; then
  clone_and_ppo control
  clone_and_ppo lever "${lever[@]}"
else
  clone_and_ppo control &
  clone_and_ppo lever "${lever[@]}" &
  wait
fi

# 3. before (the clones) and after (the last checkpoints), paired on the same walls
# shellcheck disable=SC2086 # SEEDS is a list
for when in before after; do
  ckpt=latest.pt run=_ppo
  [ "$when" = before ] && ckpt=bc.pt run=
  python "$HERE/benchmarks/studies/oracle_ablation.py" \
    "control=$RUNS/control$run/checkpoints/$ckpt" "lever=$RUNS/lever$run/checkpoints/$ckpt" \
    --seeds $SEEDS --hands "$EVAL_HANDS" --json "$OUT/ablation_$when.json" | tee "$OUT/ablation_$when.txt"
done
