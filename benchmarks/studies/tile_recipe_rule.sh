#!/usr/bin/env bash
# Issue 56: the whole recipe with the tile network (pre-registration addendum 4.2,
# docs/results/prereg_issue47.md), judged by the rule written before it ran.
#
#   benchmarks/studies/tile_recipe_rule.sh RUN_DIR            # after the run has ended
#   CURVE_ONLY=1 benchmarks/studies/tile_recipe_rule.sh RUN_DIR   # while it runs: the curve so far
#   HANDS=8 CURVE_EVERY=50 benchmarks/studies/tile_recipe_rule.sh RUN_DIR   # a smoke test of the script
#
# 1. The rule: the final checkpoint (the last update's, never an intermediate one) and `pretrained`
#    (v2), each paired against `heuristic`, and the final against v2, on 51515 / 52525 / 53535
#    (HANDS per seed, default 4,000; oracle_ablation.py pools the seeds). Ship as v3 only if the
#    final beats v2 and the heuristic with both pooled CIs above 0.
# 2. The curve beside v2's run: every CURVE_EVERY-th saved checkpoint (default every 976 updates,
#    the in-run points' spacing) and the final, minus `heuristic` on 4041 / 5051 / 6061 (v2's run
#    was drawn on them). Each point is played once into OUT/curve/uN.json and kept: CURVE_ONLY=1
#    plays the points saved so far while the run goes on (so their checkpoints need not be kept),
#    without the rule.
# 3. The in-run pick: best.pt's own figure (the trainer's 8,000 hands on reserved walls) against
#    its figure on the rule's 12,000 hands (issue 56's second target: within its own CI).
# ADDENDUM=5 (the second seed of the same run, addendum 5): two finals have then been tried, so the
#    rule is played again on 71717 / 72727 / 73737 (OUT/rule2.json) and the final ships only if it
#    passes on both sets; and the final is paired against seed 1's final (SEED1_FINAL, default
#    docs/results/o130_res32_ent/final.pt) on 51515 / 52525 / 53535 (OUT/seed1.json).
# Everything goes to OUT (default RUN_DIR/rule); WORKERS evaluation processes (default 2).
set -euo pipefail
RUN=${1:?usage: tile_recipe_rule.sh RUN_DIR}
ADDENDUM=${ADDENDUM:-4.2}
case "$ADDENDUM" in 4.2 | 5) ;; *) echo "tile_recipe_rule: ADDENDUM is 4.2 or 5, not '$ADDENDUM'" >&2; exit 2 ;; esac
SEED1_FINAL=${SEED1_FINAL:-$(cd "$(dirname "$0")/../.." && pwd)/docs/results/o130_res32_ent/final.pt}
HANDS=${HANDS:-4000}
CURVE_EVERY=${CURVE_EVERY:-976}
WORKERS=${WORKERS:-2}
OUT=${OUT:-$RUN/rule}
HERE=$(cd "$(dirname "$0")" && pwd)
CK="$RUN/checkpoints"
mkdir -p "$OUT"

final=$(ls "$CK"/update_*.pt 2>/dev/null | sort | tail -1 || true)
best="$CK/best.pt"
[ -n "$final" ] || { echo "tile_recipe_rule: no update_*.pt in $CK" >&2; exit 2; }

play_curve() {  # every point of the curve not played yet, then all of them in OUT/curve.json
  mkdir -p "$OUT/curve"
  for f in "$CK"/update_*.pt; do
    n=$((10#$(basename "$f" .pt | sed 's/update_//')))
    if { [ $((n % CURVE_EVERY)) -eq 0 ] || [ "$f" = "$ended" ]; } && [ ! -f "$OUT/curve/u$n.json" ]; then
      python "$HERE/oracle_ablation.py" "u$n=$f" --seeds 4041 5051 6061 --hands "$HANDS" --workers "$WORKERS" \
        --json "$OUT/curve/u$n.json"  # written whole (write_atomic): a killed point leaves no file
    fi
  done
  python - "$OUT/curve" "$OUT/curve.json" <<'EOF' | tee "$OUT/curve.txt"
import json, sys
from pathlib import Path
from fzmj.train.evaluation import pooled
from fzmj_env.atomic import write_atomic

files = sorted(Path(sys.argv[1]).glob("u*.json"), key=lambda p: int(p.stem[1:]))
rows = [r for f in files for r in json.load(open(f))]
write_atomic(sys.argv[2], json.dumps(rows, indent=1))
print("| checkpoint | env steps | minus heuristic, pooled |")
for f in files:
    mine = [r for r in rows if r["run"] == f.stem]
    p = pooled(mine)
    print(f"| {f.stem} | {mine[0]['global_step']:,} | {p['mean']:+.2f} [{p['ci95'][0]:+.2f}, {p['ci95'][1]:+.2f}] on {p['hands']:,} |")
EOF
}

ended=""  # the final is a point of the curve once the run has ended
if [ "${CURVE_ONLY:-0}" = 1 ]; then play_curve; exit 0; fi

[ -f "$best" ] || { echo "tile_recipe_rule: no $best (was the run made with eval_paired_every?)" >&2; exit 2; }
if [ "$ADDENDUM" = 5 ] && [ ! -f "$SEED1_FINAL" ]; then
  echo "tile_recipe_rule: ADDENDUM=5 needs seed 1's final: no $SEED1_FINAL (set SEED1_FINAL)" >&2; exit 2
fi
# only the run's last update is a candidate (addendum 4.2): refuse a run that has not ended
python - "$final" <<'EOF'
import sys
from fzmj.agents.checkpoint import load_checkpoint

ck = load_checkpoint(sys.argv[1])
c = ck["config"]
# Args.num_updates of the run that wrote it (its ranks, not this process's)
last = max(1, c["total_timesteps"] // (c["num_tables"] * c["num_steps"] * ck.get("world_size", 1)))
if ck["update"] != last:
    sys.exit(f"tile_recipe_rule: {sys.argv[1]} is update {ck['update']} of {last}: the run has not ended (resume it first)")
EOF

# 1. the rule (the first spec is the control: the final is also played against it)
python "$HERE/oracle_ablation.py" v2=pretrained:v2 final="$final" best="$best" \
  --seeds 51515 52525 53535 --hands "$HANDS" --workers "$WORKERS" --json "$OUT/rule.json" | tee "$OUT/rule.txt"

if [ "$ADDENDUM" = 5 ]; then  # the same rule on a second set of unused walls; the final against seed 1's
  python "$HERE/oracle_ablation.py" v2=pretrained:v2 final="$final" \
    --seeds 71717 72727 73737 --hands "$HANDS" --workers "$WORKERS" --json "$OUT/rule2.json" | tee "$OUT/rule2.txt"
  python "$HERE/oracle_ablation.py" seed1="ppo:$SEED1_FINAL" final="$final" \
    --seeds 51515 52525 53535 --hands "$HANDS" --workers "$WORKERS" --json "$OUT/seed1.json" | tee "$OUT/seed1.txt"
fi

# 2. the curve
ended=$final
play_curve

# 3. the verdict, from the pooled rows of step 1
python - "$OUT" "$best" "$ADDENDUM" <<'EOF' | tee "$OUT/verdict.txt"
import json, sys
from pathlib import Path
from fzmj.agents.checkpoint import load_checkpoint
from fzmj.train.evaluation import pooled

out, addendum = Path(sys.argv[1]), sys.argv[3]
played = {f.name: json.loads(f.read_text()) for f in map(out.joinpath, ("rule.json", "rule2.json", "seed1.json")) if f.is_file()}
def pool(name, run, ref):
    return pooled([r for r in played[name] if r["run"] == run and r["ref"] == ref])
def show(p):
    lo, hi = p["ci95"]
    return f"{p['mean']:+.2f} [{lo:+.2f}, {hi:+.2f}] on {p['hands']:,} hands"
ship = True
for name, walls in [("rule.json", "51515 / 52525 / 53535")] + [("rule2.json", "71717 / 72727 / 73737")] * (addendum == "5"):
    vs_heur, vs_v2 = pool(name, "final", "heuristic"), pool(name, "final", "control")
    print(f"on {walls}:")
    print(f"  final - heuristic: {show(vs_heur)}")
    print(f"  final - v2:        {show(vs_v2)}")
    print(f"  v2 - heuristic:    {show(pool(name, 'v2', 'heuristic'))}")
    ship = ship and vs_heur["ci95"][0] > 0 and vs_v2["ci95"][0] > 0
if addendum == "5":
    print(f"final - seed 1's final, on 51515 / 52525 / 53535: {show(pool('seed1.json', 'final', 'control'))}")
verdict = "SHIP as pretrained v3" if ship else "do not ship; the curve and the table are the result"
print(f"rule (addendum {addendum}): {verdict}")
b = load_checkpoint(sys.argv[2])["best"]
later = pool("rule.json", "best", "heuristic")
lo, hi = b["ci95"]
inside = "within" if lo <= later["mean"] <= hi else "outside"
print(f"best.pt (update {b['update']}): in-run {b['mean']:+.2f} [{lo:+.2f}, {hi:+.2f}] on {b['hands']:,} reserved hands;")
print(f"  on the rule's walls {show(later)}: {inside} its in-run CI")
EOF
