#!/usr/bin/env bash
# The Einstein paper's fine-tuning data (Peng, Ma et al., arXiv 2510.25595, section 3.2 and App. B):
# for each action space, 250, 500 and 500 training games of N = 4, 5 and 6 blocks, five distinct
# trajectories per game (the planner's optimum and near-optimal plans), 1,000 trajectories drawn from
# the pool; with CoT (<THINK>...</THINK><ACTION>...</ACTION>) and plain (<ACTION>...</ACTION>).
# The first 100 games of run seed 0 are held out for every N: examples/einstein_table1.toml plays them.
# Usage: examples/einstein_sft.sh [OUT_DIR]   (default data/einstein_sft)
set -euo pipefail
out=${1:-data/einstein_sft}
for actions in share_ask share ask none; do
  for cot in yes no; do
    name=$actions-$([ "$cot" = yes ] && echo cot || echo plain)
    asymgames dataset --game einstein --actions "$actions" --cot "$cot" --demonstrations 5 --sample 1000 \
      --part blocks=4:250 --part blocks=5:500 --part blocks=6:500 --holdout 100 --seed 0 --out "$out/$name"
  done
done
