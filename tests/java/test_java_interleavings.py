"""Seeded random interleavings of real Java Hudi operations with ours, judged after every step
by Java's snapshot and RO reads, hudi-rs, our reader and the model (issue 21 item 4; issue 22's
"every crash point of ours and archival after every Java commit"). The runner and what it
checks: tests/support/java_interleave.py.

CI: 2 seeds x 9 steps per Hudi line (v6: 0.14 and 0.15; v8: 1.0; v9: 1.1); behind ``slow``:
100 seeds x 16 steps per line. A failure names the seed, the line and every step taken.
"""

from __future__ import annotations

import json
import os

import pytest

from java_hudi import VERSION_LINES
from java_interleave import JavaWorld

pytestmark = pytest.mark.java

CI_SEEDS, CI_STEPS = range(2), 9
SLOW_SEEDS, SLOW_STEPS = range(100, 200), 16


def _run(java_hudi, tmp_path, version, line, seed, steps, killed_writes):
    w = JavaWorld(tmp_path, java_hudi(line), seed, version, killed_writes=killed_writes)
    figures = w.run(steps)
    out = os.environ.get("HUDI_ETC_JAVA_STEPS")
    if out:  # per-step cost figures, for sizing the CI share
        with open(out, "a", encoding="utf-8") as f:
            f.write(json.dumps({"line": line, "version": version, "seed": seed, **figures}) + "\n")
    return figures


#: (line, seed) -> reason of a strict xfail; none is open. Last one: v9 seed 0 with Java 1.1 read a
#: key twice (a key living only in a log of our exact split, and a new file group made for it). It
#: passes since session 7, which changed three things it depends on: our write looks up keys no base
#: file holds in the latest slices' logs (issue 22 item 5), the run's final write goes through the
#: API, and the new crash point schedule.after-staged shifted the seed's choices. Which of them
#: closed it was not isolated.
OPEN: dict = {}


def _params(seeds):
    return [pytest.param(v, line, s, id=f"v{v}-hudi{line}-s{s}",
                         marks=[pytest.mark.xfail(strict=True, reason=OPEN[(line, s)])] if (line, s) in OPEN else [])
            for v, line in VERSION_LINES for s in seeds]


@pytest.mark.parametrize("version,line,seed", _params(CI_SEEDS))
def test_real_java_interleaving(java_hudi, tmp_path, version, line, seed):
    # a SIGKILLed Java write starts a JVM of its own (~25 s here): in CI one seed per line has it
    _run(java_hudi, tmp_path, version, line, seed, CI_STEPS, killed_writes=1 if seed == 0 else 0)


@pytest.mark.slow
@pytest.mark.parametrize("version,line,seed", _params(SLOW_SEEDS))
def test_real_java_interleaving_slow(java_hudi, tmp_path, version, line, seed):
    _run(java_hudi, tmp_path, version, line, seed, SLOW_STEPS, killed_writes=1)


@pytest.mark.parametrize("version,line", [pytest.param(v, line, id=f"v{v}-hudi{line}") for v, line in VERSION_LINES])
def test_catalog_registration_keeps_our_properties(java_hudi, tmp_path, monkeypatch, version, line):
    """Found by the interleavings (issue 22 a): Spark SQL's ``CREATE TABLE ... USING hudi
    LOCATION`` over our table (how a catalog registers it; Java's ``CALL run_clean(table => ...)``
    needs one) rewrites hoodie.properties with only the keys Hudi's table config knows on Hudi
    0.14, 0.15 and 1.0 (1.1 keeps them): our hoodie.etc.* keys go, and on v6 the table's
    timeline zone key too. What configure and table creation recorded lives in
    .hoodie/.aux/hudi-etc/settings.json and holds: with no zone variable set, configure reads it
    back unchanged, an exact split (it needs the event-time field) is planned in the recorded
    zone, our execute is refused as java-compaction=on says, and Java executes the plan."""
    from airflow_hudi_etc.hudi.errors import JavaCompactionError
    from airflow_hudi_etc.hudi.config.properties import loads
    from java_checks import assert_all, new_table, row

    monkeypatch.delenv("HUDI_ETC_TIMELINE_TIMEZONE", raising=False)  # the record alone must do
    t = new_table(tmp_path, version)
    t.write([row(f"k{i}", 1, 10, i) for i in range(3)])
    t.write([row("k1", 2, 11, 11), row("k2", 2, 23, 22)])  # one log across the 2h threshold: split
    settings = {"timeline_zone": "UTC", "java_compaction": "on"}
    assert t.configure(**settings)["status"] == "configured"
    props = tmp_path / "t" / ".hoodie" / "hoodie.properties"
    before = loads(props.read_text())
    java = java_hudi(line)
    java.run_clean(t.path, retain_commits=1)
    lost = sorted(set(before) - set(loads(props.read_text())))
    if line != "1.1":  # what Java did (should a line stop doing it, this says so)
        assert "hoodie.etc.event.time.field" in lost, lost
        assert ("hoodie.table.timeline.timezone" in lost) is (version == 6), lost
    again = t.configure(**settings)
    assert again["status"] == "unchanged" and again["before"] == settings, (lost, again)
    assert again["timeline_zone_source"] == ("table" if version != 6 or line == "1.1" else "recorded")
    s = t.compaction.schedule("2h", compaction_time="2026-01-02T00:00:00Z", exact_split=True)
    assert s.instant, s
    with pytest.raises(JavaCompactionError, match="java.compaction=on"):
        t.compaction.execute(s.instant)
    assert java.run_compaction(t.path, s.instant) == [s.instant]
    assert_all(java, t.path, {"k0": 0.0, "k1": 11.0, "k2": 22.0})
