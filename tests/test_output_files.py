"""Output is never lost or half-written (issue 58): every file a command writes goes through
``fzmj_env.atomic.write_atomic``; an output folder is checked before the work; a full disk leaves
nothing under the final name, keeps the old file, removes its temporary file and names the file."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from full_disk import fill_disk

from fzmj_env.atomic import WriteError, remove_stale_temps, write_atomic
from fzmj_env.cli import check_output_dir

ROOT = Path(__file__).resolve().parent.parent


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_full_disk_keeps_the_old_file_and_names_the_new_one(tmp_path, monkeypatch):
    old = tmp_path / "res.json"
    old.write_text('{"old": 1}')
    fill_disk(monkeypatch)
    with pytest.raises(WriteError) as e:
        write_atomic(old, "x" * 10_000)
    assert str(e.value) == f"cannot write {old}: No space left on device; nothing was written under that name"
    assert old.read_text() == '{"old": 1}'
    assert _temps(tmp_path) == []
    with pytest.raises(WriteError):
        write_atomic(tmp_path / "new.json", lambda f: f.write(b"y" * 10_000))  # a streamed writer too
    assert not (tmp_path / "new.json").exists() and _temps(tmp_path) == []


def test_a_written_file_is_whole_and_ordinary(tmp_path):
    p = write_atomic(tmp_path / "a.json", "é" * 5000)
    assert p.read_text(encoding="utf-8") == "é" * 5000
    assert p.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_stale_temporary_files_of_dead_processes_are_removed(tmp_path):
    dead = tmp_path / ".m.json.fzmj-999999999-abc.tmp"  # above any pid_max: no such process
    mine = tmp_path / f".m.json.fzmj-{os.getpid()}-abc.tmp"  # a write in progress in this process
    other = tmp_path / ".notes.tmp"  # not ours
    for p in (dead, mine, other):
        p.write_bytes(b"")
    assert remove_stale_temps(tmp_path) == [dead]
    assert _temps(tmp_path) == sorted([mine.name, other.name])


@pytest.mark.parametrize("bad", ["/proc/rec", "/proc/self/x/y", "FILE"])
def test_an_output_folder_that_cannot_be_written_is_one_line(tmp_path, bad):
    if bad == "FILE":
        bad = str(tmp_path / "f")
        Path(bad).write_text("")
    with pytest.raises(ValueError, match=re.escape(repr(bad))) as e:
        check_output_dir(bad, "--save-records")
    assert "\n" not in str(e.value)
    assert check_output_dir(tmp_path / "new" / "deep", "--x").is_dir()
    assert _temps(tmp_path / "new" / "deep") == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_output_folder_is_refused(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    with pytest.raises(ValueError, match="cannot write into"):
        check_output_dir(ro, "--save-records")


def test_eval_refuses_an_unwritable_records_folder_before_playing(capsys, monkeypatch):
    from fzmj.agents.evaluate import cli, run

    monkeypatch.setattr(run, "play_all", lambda *a, **k: pytest.fail("played before checking the folder"))
    with pytest.raises(SystemExit) as e:
        cli.main(["--agents", "random", "--hands", "4", "--no-progress", "--save-records", "/proc/rec"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["fzmj-eval: error: --save-records: cannot write into '/proc/rec': No such file or directory"]


def test_eval_on_a_full_disk_keeps_the_results_and_the_old_out_file(tmp_path, capsys, monkeypatch):
    from fzmj.agents.evaluate import cli

    out, rec = tmp_path / "res.json", tmp_path / "rec"
    out.write_text('{"old": true}')
    rec.mkdir()
    (rec / ".00_x.json.fzmj-999999999-ab.tmp").write_bytes(b"")  # left by a killed run: removed
    fill_disk(monkeypatch, hits=lambda name: name != out.name)  # the records only
    argv = ["--agents", "random", "--hands", "8", "--no-progress", "--seed", "1", "--agent-seed", "0"]
    argv += ["--save-records", str(rec)]
    rc = cli.main([*argv, "--out", str(out)])
    io = capsys.readouterr()
    assert rc == 1
    assert "| random |" in io.out  # the table is printed
    assert json.loads(out.read_text())["records_error"].startswith(f"cannot write {rec}")  # the results kept
    [line] = io.err.strip().splitlines()
    assert line.startswith(f"fzmj-eval: error: --save-records: cannot write {rec}{os.sep}") and "No space" in line
    assert not [p for p in rec.iterdir() if p.stat().st_size == 0] and _temps(rec) == []
    fill_disk(monkeypatch)  # now --out too: the old file stays whole
    out.write_text('{"old": true}')
    assert cli.main([*argv, "--out", str(out)]) == 1
    assert json.loads(out.read_text()) == {"old": True} and _temps(tmp_path) == []
    assert f"cannot write {out}: No space left on device" in capsys.readouterr().err


def test_league_on_a_full_disk_names_the_file_and_a_later_run_cleans_up(tmp_path, capsys, monkeypatch):
    from fzmj.agents.league import cli

    d = tmp_path / "lg"
    argv = ["--agents", "random", "heuristic", "--hands-per-pairing", "8", "--dir", str(d), "--seed", "0"]
    fill_disk(monkeypatch, hits=lambda name: name not in ("config.json", "roster.json"))  # a match first
    assert cli.main([*argv, "--no-progress"]) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"fzmj-league: error: WriteError: cannot write {d / 'matches'}{os.sep}")
    assert line.endswith("No space left on device; nothing was written under that name")
    assert _temps(d / "matches") == [] and not list((d / "matches").glob("*.json"))
    monkeypatch.undo()
    stale = d / "matches" / ".x.json.fzmj-999999999-0.tmp"  # a run killed mid-write
    stale.write_bytes(b"")
    assert cli.main([*argv, "--no-progress"]) == 0
    assert _temps(d / "matches") == [] and _temps(d) == []


# ---- the writers -----------------------------------------------------------------------------------
# Every call in the installed packages that creates or replaces a file, and why it may: the rest go
# through fzmj_env.atomic. A new writer fails this test until it is atomic or listed with its reason.
_WRITE = re.compile(r"\.write_text\(|\.write_bytes\(|open\([^)]*[\"'][wax]b?[\"']|\.savefig\(|torch\.save\(|np\.save")
ALLOWED = {
    "fzmj_env/atomic.py": "the writer itself",
    "fzmj_env/cli.py": "the output folder's probe file, removed at once",
    "fzmj_env/core/hand.py": "the hand tables' cache: its own temporary file and rename (the core imports no fzmj_env)",
    "fzmj_env/_numba_cache.py": "the cache's fingerprint stamp: a temporary file, then a rename",
    "fzmj_env/_shipped_kernels.py": "the wheel build's manifest (python -m fzmj_env.build_cache, not a command)",
    "fzmj/agents/checkpoint.py": "checkpoints: mkstemp and rename, with torch's hidden OS error recovered",
    "fzmj/train/belief.py": "the belief checkpoints: save_checkpoint's temporary files and rename",
    "fzmj/train/run_dir.py": "the run folder's write probe",
    "fzmj/train/run_setup.py": "an empty log file created for the run's append-only log",
    "fzmj/train/evaluation.py": "paired.jsonl, append-only: an append never destroys the lines before it",
    "fzmj/train/metrics.py": "train.log, append-only, as paired.jsonl",
    "fzmj/train/best.py": "best.pt's line appended to train.log (best.pt itself goes through the checkpoint writer)",
    "fzmj/train/distributed.py": "debug dumps of a failing rank (FZMJ_DIST_DUMP), never a result",
    "fzmj/web/make_font.py": "a developer's tool regenerating a checked-in stylesheet",
}


def _writers() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for pkg in ("fzmj_env", "fzmj"):
        for f in sorted((ROOT / pkg).rglob("*.py")):
            hits = [line.strip() for line in f.read_text().splitlines() if _WRITE.search(line)]
            hits = [h for h in hits if not h.startswith(("#", '"', "``"))]
            if hits:
                found[str(f.relative_to(ROOT))] = hits
    return found


def test_every_writer_is_atomic_or_listed_with_its_reason():
    writers = _writers()
    unlisted = {f: lines for f, lines in writers.items() if f not in ALLOWED}
    assert not unlisted, f"files written without fzmj_env.atomic.write_atomic: {unlisted}"
    assert not set(ALLOWED) - set(writers), "listed writers that write nothing now: drop them"
