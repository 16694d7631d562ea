"""fzmj: a reinforcement-learning environment for Fuzhou Mahjong (福州麻将).

Public API: tile notation (R1), the hand API (win detection, waits, specials, shanten), the
Python game driver, game records, and the environments.
"""

from ._numba_cache import clear_stale_cache, install_cache_fallback, install_cache_repair, install_compile_notice
from ._numba_inline import install_fast_inlining
from ._shipped_kernels import install_shipped_kernels

install_cache_fallback()  # no writable cache folder (a read-only install): compile, do not raise
clear_stale_cache(__path__[0])  # before any cached kernel loads (see _numba_cache.py)
install_cache_repair()  # a damaged cache file of our kernels is rebuilt, not a bare EOFError
install_shipped_kernels()  # our kernels built with the wheel, where the host's cache has none
install_compile_notice()  # one stderr line when our kernels compile (a cold cache)
install_fast_inlining()  # Numba's inliner copies a callee's scope once, not once per block

from .aec import env, raw_env  # noqa: E402
from .core.hand import flush_specials, is_win, is_win_batch, shanten, special_shapes, swims, waits, win_split  # noqa: E402
from .game import Game, IllegalActionError, hand_result  # noqa: E402
from .parallel import parallel_env  # noqa: E402
from .record import RecordError, load_record, make_record, replay, save_record  # noqa: E402
from .rules import available_rules, load_rules  # noqa: E402
from .snapshot import StateError  # noqa: E402
from .tiles import format_tiles, kind_index, kind_name, parse_tiles  # noqa: E402
from .vector import VectorEnv  # noqa: E402  (the README's F.VectorEnv)

__all__ = [
    "parse_tiles",
    "format_tiles",
    "kind_index",
    "kind_name",
    "is_win",
    "waits",
    "is_win_batch",
    "special_shapes",
    "flush_specials",
    "swims",
    "shanten",
    "win_split",
    "Game",
    "IllegalActionError",
    "hand_result",
    "make_record",
    "save_record",
    "load_record",
    "replay",
    "RecordError",
    "StateError",
    "load_rules",
    "available_rules",
    "env",
    "raw_env",
    "parallel_env",
    "VectorEnv",
]
from ._version import __version__ as __version__  # noqa: E402  (the single source: _version.py)

# The adapters that take agent specs live a layer up, in ``fzmj.integrations``: the env never
# imports them. Their Gymnasium id is registered here by name (a string imports nothing), so
# ``import fzmj_env; gym.make("fzmj/SingleSeat-v0")`` works as documented.


def _register_gymnasium_ids() -> None:
    from gymnasium.envs.registration import register, registry

    if "fzmj/SingleSeat-v0" not in registry:
        register(
            id="fzmj/SingleSeat-v0",
            entry_point="fzmj.integrations.gymnasium:SingleSeatEnv",
            vector_entry_point="fzmj.integrations.gymnasium:SingleSeatVectorEnv",
        )


_register_gymnasium_ids()
