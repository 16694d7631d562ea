"""The trainer's config: one dataclass, one field per key, a one-line docstring under each
(CleanRL's ``Args``; ``fzmj-train --help`` and docs/training.md read them back).

A number's allowed range is on its field: ``key(default, lo=..., lo_ok=..., hi=...)`` or
``key(default, choices=(...))`` (``fzmj/train/config.py``, ``Range``); a number key without one
is refused in one line. Checks of keys that depend on each other live in one place,
``train/config_checks.py``: ``Args`` calls it on construction, so a config that exists is a
valid one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fzmj_env.checks import MAX_HANDS_PER_GAME, MAX_SEED, MAX_TABLES

from . import distributed
from .config import key
from .config_checks import check_args


@dataclass
class Args:
    """Every key of ``fzmj-train`` (a YAML file's keys, ``--set key=value``)."""

    # ---- experiment -----------------------------------------------------------------------------
    algo: str = key("ppo", choices=("ppo", "distill"))
    """ppo: PPO self-play (this loop); distill: expert iteration, the learner's states labelled by distill_teacher (train/distill.py)"""
    exp_name: str = "ppo_selfplay"
    """name of the experiment; the run directory is <runs_dir>/<exp_name>__<seed>__<unix time> unless run_name is set"""
    run_name: str = ""
    """name of the run directory under runs_dir (empty: derived from exp_name, seed and the time)"""
    runs_dir: str = "runs"
    """where run directories (TensorBoard events, checkpoints) are written"""
    overwrite: bool = False
    """a fresh run into a run folder that already holds a run replaces it (false: refused; see --overwrite)"""
    seed: int = key(1, lo=0, hi=MAX_SEED)
    """seed of torch, numpy and the tables' game seeds"""
    torch_deterministic: bool = True
    """if toggled, `torch.backends.cudnn.deterministic=True`"""
    device: str = "auto"
    """auto (cuda when available, else cpu), cpu or cuda"""
    torch_threads: int = key(0, lo=0, hi=4096)
    """torch intra-op threads on CPU (0: torch's default, the cores this process may use; 2 in deterministic mode)"""
    deterministic: bool = False
    """the same seed gives the same digits on any x86-64 CPU: portable torch kernels, MKL_CBWR=COMPATIBLE, generic Numba code, a fixed thread count (train/deterministic.py; slower, docs/training.md)"""
    env_threads: int = key(1, lo=0, hi=4096)
    """Numba threads that step the tables (1: serial; 0: all Numba may use; more pays off with thousands of tables)"""

    # ---- environment ----------------------------------------------------------------------------
    rules: str = "fuzhou-lianzhong"
    """rule preset of the tables"""
    hands_per_game: int = key(1, lo=1, hi=MAX_HANDS_PER_GAME)
    """hands per game (a match carries dealer and streak from hand to hand)"""
    reward_scale: float = key(0.02, lo=0, lo_ok=False)
    """rewards are the hand's score change times this"""
    num_tables: int = key(256, lo=1, hi=MAX_TABLES)
    """tables stepped together (B); each env step is one decision at every table"""
    num_steps: int = key(64, lo=1, hi=1 << 20)
    """env steps per table per rollout (T); a rollout is T * B decisions"""
    total_timesteps: int = key(20_000_000, lo=1, hi=1 << 50)
    """total env steps (decisions of all seats) of the run"""

    # ---- PPO ------------------------------------------------------------------------------------
    learning_rate: float = key(2.5e-4, lo=0, lo_ok=False, hi=1)
    """Adam learning rate"""
    anneal_lr: bool = True
    """anneal the learning rate linearly to 0 over the run"""
    gamma: float = key(0.99, lo=0, hi=1)
    """discount per decision of the same seat"""
    gae_lambda: float = key(0.95, lo=0, hi=1)
    """lambda of GAE along each seat's decisions"""
    num_minibatches: int = key(4, lo=1, hi=1 << 20)
    """minibatches per epoch (the batch is the rollout's trainable learner decisions)"""
    update_epochs: int = key(2, lo=1, hi=10_000)
    """epochs over the batch per update"""
    norm_adv: bool = True
    """normalize advantages per minibatch"""
    clip_coef: float = key(0.2, lo=0, lo_ok=False)
    """surrogate clipping coefficient"""
    clip_vloss: bool = True
    """clip the value loss like the policy (CleanRL)"""
    ent_coef: float = key(0.01, lo=0)
    """entropy bonus coefficient"""
    vf_coef: float = key(0.5, lo=0)
    """value loss coefficient"""
    max_grad_norm: float = key(0.5, lo=0, lo_ok=False)
    """gradient clipping (global norm)"""
    target_kl: float | None = key(None, lo=0, lo_ok=False)
    """stop the update's epochs early when approx_kl exceeds this (null: never)"""
    duplicate_group: int = key(1, lo=1)
    """tables per duplicate group (1: off): K tables play each wall, and a decision's advantage is its seat's hand score minus the mean of the other K-1 plays (train/same_walls.py; replaces GAE; needs hands_per_game 1)"""

    # ---- network --------------------------------------------------------------------------------
    network: str = key("mlp", choices=("mlp", "resnet"))
    """mlp or resnet"""
    hidden_sizes: list[int] = field(default_factory=lambda: [256, 256])
    """mlp: hidden layer sizes; resnet: the MLP head's sizes after the convolutions"""
    res_channels: int = key(64, lo=1, hi=4096)
    """resnet: channels of the residual tower"""
    res_blocks: int = key(4, lo=1, hi=256)
    """resnet: residual blocks"""
    input_layer: str = key("auto", choices=("auto", "sparse", "dense"))
    """mlp's first layer over the 0/1 planes: auto (sparse on CPU, dense on CUDA), sparse or dense"""
    oracle_critic: bool = False
    """the critic also sees the oracle planes (hidden state); the policy never does"""
    oracle_guide: bool = False
    """oracle guiding (Suphx): the actor also reads the oracle planes, each decision's kept with a probability falling from 1 to 0 over the first oracle_guide_anneal of the run, zeros after that and at play time; needs oracle_critic (docs/training.md)"""
    oracle_guide_anneal: float = key(0.5, lo=0, hi=1)
    """share of the run over which the oracle planes of an oracle-guided actor fade out (then the run trains without them); 0: never read, for a run going on from a guided bc_checkpoint"""
    hand_features: bool = False
    """append the hand-feature planes (fzmj_env/features.py: shanten, per-discard shanten and acceptance, waits, claims, specials) to the observation"""
    belief_planes: bool = False
    """append 14 planes of a frozen belief model's reading (danger of each discard, each other seat's P(ready) and P(wins on each kind); fzmj/agents/belief_net.py, docs/belief.md); the checkpoint carries the belief's weights"""
    belief_model: str = "belief"
    """with belief_planes: the belief model whose weights the network starts with (belief, the shipped one, or belief:PATH); it must be of the run's preset and read the run's observation"""
    obs_version: int = key(2, choices=(2, 3))
    """the observation layout the network reads: 2 (99 planes) or 3 (v2's planes, then the public history: each seat's discards in order with their turn, melds with source and turn, flowers' turns, match scores; docs/observation.md)"""

    # ---- warm start: behaviour cloning (train/bc.py) --------------------------------------------
    bc_decisions: int = key(0, lo=0, hi=1 << 36)
    """teacher decisions to clone before PPO (0: no warm start)"""
    bc_teacher: str = "heuristic"
    """agent spec of the teacher that plays all four seats of the demonstration games, or oracle:defend: the all-seeing teacher (the heuristic that never deals in; it reads the hidden hands, so it labels training data only: fzmj/train/oracle_teacher.py)"""
    bc_epochs: int = key(4, lo=1, hi=10_000)
    """passes over the demonstrations"""
    bc_batch_size: int = key(1024, lo=1, hi=1 << 24)
    """minibatch size of behaviour cloning"""
    bc_learning_rate: float = key(0.001, lo=0, lo_ok=False, hi=1)
    """Adam learning rate of behaviour cloning (decays linearly to a tenth)"""
    bc_eval_hands: int = key(400, lo=0, hi=1 << 30)
    """hands of the duplicate evaluation of the cloned policy against three copies of its teacher (0: none)"""
    bc_dagger_rounds: int = key(0, lo=0, hi=1000)
    """DAgger rounds after the first clone: the clone plays all four seats of bc_decisions new decisions, bc_teacher labels them, the clone is fitted again on all of them (0: plain cloning)"""
    bc_dataset: str = ""
    """a dataset folder (fzmj-data collect, docs/data.md) to clone instead of games bc_teacher plays now: up to bc_decisions of its recorded decisions with a choice, whole games, replayed in the run's obs_version; it must be of the run's preset (bc_teacher still labels DAgger rounds and names the clone's check opponent; the all-seeing oracle:defend labels the dataset's decisions from their replayed hidden state)"""
    bc_save_dataset: bool = False
    """write the warm start's games (bc_teacher at every seat, the first round) as a dataset in the run folder, RUN/bc_dataset (fzmj-data's format, ~1.2 bytes a decision; a later run's bc_dataset clones it): every hand played to its end, so the hands running when bc_decisions was reached are whole there; the clone is the same either way (needs bc_decisions > 0, no bc_dataset, hands_per_game 1, pyarrow: pip install "fzmj[data]"). Off by default: pyarrow is optional and the same seed plays the same games again"""
    bc_stream: bool = False
    """with bc_dataset: stream the clone's minibatches through the dataset loader (memory: a few row groups, whatever the size) instead of holding every decision's planes (2.7 kB each in v2 with the hand features); bc_decisions then counts the decisions played in its games, forced ones included (train/bc_stream.py)"""
    bc_checkpoint: str = ""
    """start from this checkpoint's policy (and critic) instead of cloning: a path (e.g. an earlier run's bc.pt) or pretrained[:vN], a shipped one; it is also the KL teacher"""

    # ---- expert iteration (algo: distill; train/distill.py) ----------------------------------------
    distill_iterations: int = key(2, lo=1, hi=100_000)
    """iterations of play, label and fit"""
    distill_decisions: int = key(4096, lo=1, hi=1 << 36)
    """learner decisions (with a choice) labelled by distill_teacher per iteration"""
    distill_teacher: str = "search"
    """agent spec that labels the learner's decisions (a search is 40-140 ms per searched decision at worlds=64)"""

    # ---- teacher term during PPO ----------------------------------------------------------------
    teacher_coef: float = key(0.0, lo=0)
    """weight of the pull toward the teacher in the PPO loss (0: none)"""
    teacher_mode: str = key("kl", choices=("kl", "ce"))
    """kl: KL(frozen BC policy || learner) on the learner's states (needs bc_decisions > 0); ce: cross-entropy to bc_teacher's action on them"""
    teacher_anneal: float = key(0.5, lo=0, hi=1)
    """share of the run over which teacher_coef decays linearly to 0 (0: constant)"""

    # ---- opponent pool --------------------------------------------------------------------------
    pool_prob: float = key(0.0, lo=0, hi=1)
    """probability that a new game is played against the pool (0: pure self-play)"""
    pool_heuristic_frac: float = key(0.5, lo=0, hi=1)
    """share of pool games against pool_target (the rest: frozen past policies)"""
    pool_target: str = "heuristic"
    """agent spec of the pool's target opponent (heuristic by default)"""
    pool_size: int = key(8, lo=0, hi=10_000)
    """frozen snapshots of the learner kept in the pool"""
    pool_snapshot_every: int = key(20, lo=1)
    """updates between two snapshots of the learner into the pool"""
    pool_learner_seats: int = key(2, choices=(1, 2, 3))
    """seats the learner plays in a pool game (the opponent plays the others)"""
    pool_paths: list[str] = field(default_factory=list)
    """checkpoints that stay in the pool as fixed opponents"""

    # ---- logging, evaluation, checkpoints -------------------------------------------------------
    log_every: int = key(1, lo=1)
    """updates between two console lines / chart points"""
    eval_every: int = key(25, lo=0)
    """updates between duplicate evaluations against random and heuristic (0: never)"""
    eval_hands: int = key(400, lo=1, hi=1 << 30)
    """hands per evaluation (against each of random and heuristic)"""
    eval_paired_every: int = key(0, lo=0, hi=1 << 30)
    """updates between two paired evaluations (0: never): the checkpoint and then heuristic each play eval_paired_hands hands against three heuristics on the same walls, from eval_paired_seeds reserved seeds that no training or pre-registered check uses; eval/paired_vs_heuristic is the per-hand difference, with its 95% CI, and checkpoints/best.pt keeps the checkpoint of the highest point (docs/training.md, "Picking a checkpoint")"""
    eval_paired_hands: int = key(8000, lo=0, hi=1 << 30)
    """hands of each paired evaluation, split evenly over its seeds (a multiple of 4 x eval_paired_seeds: every wall in all four seats)"""
    eval_paired_seeds: int = key(4, lo=1, hi=1000)
    """wall seeds of each paired evaluation (seeds 2**63 + 0, 1, ...: reserved, never a training wall; at most train/evaluation.py's MAX_PAIRED_SEEDS)"""
    eval_workers: int = key(1, lo=1, hi=1024)
    """processes of the evaluator"""
    eval_records: int = key(0, lo=0, hi=1 << 20)
    """game records kept per evaluation (the learner's worst and best hands, for fzmj-replay) under runs/<name>/records/ (0: none)"""
    save_every: int = key(50, lo=1)
    """updates between two checkpoints (there is always one at the end)"""
    # ---- league ---------------------------------------------------------------------------------
    league_dir: str = ""
    """league folder: each evaluation checkpoint joins its roster (then `fzmj-league --dir` plays it); empty: off"""

    # ---- distributed (torchrun; docs/training.md, "Scaling out") -------------------------------
    dist_timeout: float = key(600.0, lo=0, lo_ok=False, hi=1e7)
    """seconds a rank waits for the others (a collective, a barrier) before it stops with an error"""

    def __post_init__(self):
        check_args(self)

    @property
    def batch_size(self) -> int:
        """Env steps per update, over all ranks (``world_size x num_tables x num_steps``)."""
        return self.num_tables * self.num_steps * distributed.world_size()

    @property
    def num_updates(self) -> int:
        return max(1, self.total_timesteps // self.batch_size)
