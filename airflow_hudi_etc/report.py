"""What an operator looks at: ``hudi-etc status`` (a text table) and ``hudi-etc report`` (a chart).

* :func:`format_status` turns :func:`~airflow_hudi_etc.compaction.metrics.table_metrics` (plus the
  ``sla_seconds`` / ``sla_breached`` the CLI adds) into a readable table with a ``WARNING`` line
  when the RO threshold lags more than the SLA.
* :func:`write_report` builds, from the timeline alone (the deltacommits' write stats and the
  figures each compaction commit recorded in its extra metadata), ``freshness.png`` and a small
  ``index.html`` showing it with a table of the figures.

The chart (matplotlib, Agg backend: no display needed) has three panels:

1. event time against wall time: the RO threshold (a step at each compaction), the newest event
   time written (per deltacommit), the oldest event time left in the logs after each compaction,
   and the wall-time diagonal — the vertical gap to the diagonal is the lag;
2. the threshold lag over wall time (it grows until the next compaction moves the threshold), with
   the SLA as a line;
3. log files and bytes left outside the base files after each compaction.

Imports neither Airflow nor Spark; matplotlib only inside :func:`write_report`.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import html
import io
import os
from typing import Any, Mapping

from .hudi.errors import InvalidInputError

__all__ = ["format_status", "write_report", "report_data", "human_duration", "human_bytes"]


# ----------------------------------------------------------------------------- formatting
def human_duration(seconds: float | None) -> str:
    """``18000`` → ``5h 00m``; ``90`` → ``1m 30s``; ``200000`` → ``2d 7h``; None → ``-``."""
    if seconds is None:
        return "-"
    neg = seconds < 0
    s = int(round(abs(seconds)))
    d, rem = divmod(s, 86400)
    h, rem = divmod(rem, 3600)
    m, sec = divmod(rem, 60)
    if d:
        out = f"{d}d {h}h"
    elif h:
        out = f"{h}h {m:02d}m"
    elif m:
        out = f"{m}m {sec:02d}s"
    else:
        out = f"{sec}s"
    return ("-" if neg else "") + out


def human_bytes(n: int | None) -> str:
    """``1536`` → ``1.5 KiB (1536 B)``; small values stay in bytes."""
    if n is None:
        return "-"
    if n < 1024:
        return f"{n} B"
    v = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        v /= 1024
        if v < 1024:
            break
    return f"{v:.1f} {unit} ({n} B)"


def _seconds(v: Any) -> str:
    return "-" if v is None else f"{float(v):.3f} s"


def format_status(m: Mapping[str, Any]) -> str:
    """A readable table of a table's freshness metrics (see the module docstring)."""
    rows: list[tuple[str, str]] = []
    tl = m.get("timeline") or {}
    lag = m.get("threshold_lag_seconds")
    pending = list(m.get("pending_compactions") or [])
    clustering = list(m.get("pending_clustering") or [])

    rows.append(("now", str(m.get("now") or "-")))
    if m.get("threshold") is not None:
        rows.append(("RO threshold", f"{m['threshold']}  (compaction {m.get('last_compaction_instant') or '-'})"))
        rows.append(("threshold lag", f"{human_duration(lag)}  ({lag:.0f} s)" if lag is not None else "-"))
    else:
        rows.append(("RO threshold", "none: no event-time compaction has completed yet"))
        rows.append(("threshold lag", "-"))
    if m.get("sla_seconds") is not None:
        verdict = "BREACHED" if m.get("sla_breached") else "ok"
        rows.append(("SLA", f"{human_duration(m['sla_seconds'])}  ({verdict})"))
    rows.append(("min event time in logs", str(m.get("min_event_time") or "-")))
    rows.append(("remaining log files",
                 f"{m.get('remaining_log_files', 0)}  in {m.get('slices_with_logs', 0)} of "
                 f"{m.get('file_groups', 0)} file slices"))
    rows.append(("remaining log bytes", human_bytes(m.get("remaining_log_bytes"))))
    if pending:
        age = m.get("pending_plan_age_seconds")
        rows.append(("pending compactions", f"{len(pending)}  ({', '.join(pending)})"))
        rows.append(("pending plan age", f"{human_duration(age)}  (oldest: {pending[0]})"))
    else:
        rows.append(("pending compactions", "0"))
        rows.append(("pending plan age", "-"))
    rows.append(("pending clustering", f"{len(clustering)}" + (f"  ({', '.join(clustering)})" if clustering else "")))
    rows.append(("last compaction", f"{m.get('last_compaction_instant') or '-'}  (planning "
                                    f"{_seconds(m.get('last_planning_seconds'))}, execution "
                                    f"{_seconds(m.get('last_execution_seconds'))})"))
    completed = tl.get("completed") or {}
    rows.append(("timeline", f"{tl.get('instants', 0)} instants; completed: "
                             + (", ".join(f"{k} {v}" for k, v in sorted(completed.items())) or "none")
                             + f"; latest {tl.get('latest_completed') or '-'}"))
    if m.get("event_time_source"):
        rows.append(("event times from", str(m["event_time_source"])))
    if m.get("java_compaction"):
        jc = m["java_compaction"]
        rows.append(("Java compaction", jc + {"unknown": "  (not recorded: execute is refused; hudi-etc configure "
                                                          "--java-compaction on|off)",
                                              "on": "  (Java executes the plans)",
                                              "off": "  (our execute runs)"}.get(jc, "")))

    title = (f"Hudi table {m.get('table') or '?'} ({m.get('table_type') or '?'}, version "
             f"{m.get('table_version') or '?'}) at {m.get('path') or '?'}")
    width = max(len(k) for k, _ in rows)
    lines = [title, "-" * min(len(title), 100)]
    lines += [f"  {k.ljust(width)}  {v}" for k, v in rows]

    slices = [s for s in (m.get("slices") or []) if s.get("log_files")]
    if slices:
        from .hudi.index.stats import iso_ms

        lines += ["", "  file slices with logs:"]
        head = ("partition", "file id", "base instant", "logs", "log bytes", "min event time")
        body = [(s.get("partition") or "(none)", str(s.get("file_id"))[:13], str(s.get("base_instant") or "-"),
                 str(s.get("log_files")), str(s.get("log_bytes")),
                 iso_ms(s["min_event_time"]) if isinstance(s.get("min_event_time"), int) else "-")
                for s in slices[:20]]
        widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
        for r in [head, *body]:
            lines.append("    " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if len(slices) > 20:
            lines.append(f"    ... {len(slices) - 20} more")

    if m.get("sla_breached"):
        sla = human_duration(m.get("sla_seconds"))
        if lag is None:
            lines += ["", f"WARNING: no event-time compaction has published an RO threshold yet (SLA {sla})"]
        else:
            lines += ["", f"WARNING: threshold lag {human_duration(lag)} exceeds the SLA of {sla}: "
                          f"the read-optimized view is stale"]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- the report
def _sla_seconds(sla: Any) -> float | None:
    if sla is None or sla == "":
        return None
    if isinstance(sla, _dt.timedelta):
        return sla.total_seconds()
    if isinstance(sla, (int, float)) and not isinstance(sla, bool):
        if sla <= 0:
            raise InvalidInputError(f"SLA {sla!r}: give a positive duration")
        return float(sla)
    from .compaction.times import parse_duration

    s = parse_duration(str(sla)).total_seconds()
    if s <= 0:
        raise InvalidInputError(f"SLA {sla!r}: give a positive duration")
    return s


def report_data(path: Any, *, storage_options: Mapping[str, Any] | None = None, sla: Any = None,
                now: _dt.datetime | None = None) -> dict:
    """Everything the chart and page show, from the timeline alone (no data file is read)."""
    from .compaction.metrics import compaction_history, table_metrics
    from .hudi.index.stats import iso_ms
    from .hudi.table.hudi_table import HudiTable
    from .hudi.timeline.active import Action, instant_to_epoch_ms, iter_write_stats

    table = path if isinstance(path, HudiTable) else HudiTable.load(path, storage_options)
    zone = table.timeline_zone  # the chart's time axis needs it: a typed refusal when unknown
    m = table_metrics(table, now=now, allow_scan=False, include_slices=False)
    sla_s = _sla_seconds(sla)
    ingestion = []
    running = None
    for inst in table.timeline.completed_writes:
        if inst.action is not Action.DELTA_COMMIT:
            continue
        meta = table.commit_metadata(inst)
        his = [int(s["maxEventTime"]) for s in iter_write_stats(meta) if s.get("maxEventTime") is not None]
        los = [int(s["minEventTime"]) for s in iter_write_stats(meta) if s.get("minEventTime") is not None]
        batch_max = max(his) if his else None
        if batch_max is not None:
            running = batch_max if running is None else max(running, batch_max)
        ingestion.append({"instant": inst.timestamp, "instant_time_ms": instant_to_epoch_ms(inst.timestamp, zone),
                          "min_event_time_ms": min(los) if los else None, "max_event_time_ms": batch_max,
                          "max_event_time_written_ms": running})
    history = [h for h in compaction_history(table) if h.get("threshold_ms") is not None]
    now_ms = _now_ms(m)
    lag = m.get("threshold_lag_seconds")
    figures = {
        "table": m.get("table"),
        "path": m.get("path"),
        "now": m.get("now"),
        "threshold": m.get("threshold"),
        "threshold_ms": m.get("threshold_ms"),
        "threshold_lag_seconds": lag,
        "last_compaction_instant": m.get("last_compaction_instant"),
        "min_event_time": m.get("min_event_time"),
        "max_event_time_written": iso_ms(running),
        "max_event_time_written_ms": running,
        "remaining_log_files": m.get("remaining_log_files"),
        "remaining_log_bytes": m.get("remaining_log_bytes"),
        "pending_compactions": list(m.get("pending_compactions") or []),
        "pending_plan_age_seconds": m.get("pending_plan_age_seconds"),
        "compactions": len(history),
        "deltacommits": len(ingestion),
        "sla_seconds": sla_s,
        "sla_breached": None if sla_s is None else (lag is None or lag > sla_s),
    }
    return {"figures": figures, "history": history, "ingestion": ingestion, "now_ms": now_ms}


def _now_ms(m: Mapping) -> int:
    s = str(m["now"]).replace("Z", "+00:00")
    return int(_dt.datetime.fromisoformat(s).timestamp() * 1000)


def _dt_ms(ms: int) -> _dt.datetime:
    return _dt.datetime.fromtimestamp(ms / 1000, _dt.timezone.utc)


def render_png(data: Mapping[str, Any]) -> bytes:
    """The three-panel chart of :func:`report_data` as PNG bytes (deterministic for equal data)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.dates as mdates
    from matplotlib.figure import Figure

    fig_d, hist, ing, now_ms = data["figures"], data["history"], data["ingestion"], data["now_ms"]
    fig = Figure(figsize=(10, 10), dpi=100)
    ax1, ax2, ax3 = fig.subplots(3, 1, gridspec_kw={"height_ratios": [3, 2, 2]})
    fig.suptitle(f"Event-time freshness of {fig_d.get('table') or 'table'}  (now {fig_d.get('now')})", fontsize=11)
    lo_x, hi_x = _plot_event_time(ax1, hist, ing, now_ms)
    _plot_threshold_lag(ax2, hist, now_ms, fig_d.get("sla_seconds"))
    for ax in (ax1, ax2):
        pad_x = max((hi_x - lo_x) // 40, 5)
        ax.set_xlim(_dt_ms(lo_x - pad_x), _dt_ms(hi_x + pad_x))
        loc = mdates.AutoDateLocator()
        ax.xaxis.set_major_locator(loc)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(loc))
        ax.grid(alpha=0.3)
    ax1.yaxis.set_major_formatter(mdates.DateFormatter("%m-%d %H:%M"))
    _plot_remaining_logs(ax3, hist)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def _plot_event_time(ax1, hist: list, ing: list, now_ms: int) -> tuple[int, int]:
    """Panel 1: event time against wall time (ingestion, the RO threshold, what the logs kept);
    returns the wall-time range (ms) the panels above the bars share."""
    xs_all = [r["instant_time_ms"] for r in ing] + [h["instant_time_ms"] for h in hist] + [now_ms]
    ys_all: list[int] = []
    if ing:
        pts = [(r["instant_time_ms"], r["max_event_time_written_ms"]) for r in ing
               if r["max_event_time_written_ms"] is not None]
        if pts:
            ax1.step([_dt_ms(x) for x, _ in pts] + [_dt_ms(now_ms)], [_dt_ms(y) for _, y in pts] + [_dt_ms(pts[-1][1])],
                     where="post", color="tab:blue", label="max event time written (deltacommits)")
            ax1.plot([_dt_ms(x) for x, _ in pts], [_dt_ms(y) for _, y in pts], "o", color="tab:blue", ms=3)
            ys_all += [y for _, y in pts]
    if hist:
        tx = [h["instant_time_ms"] for h in hist] + [now_ms]
        ty = [h["threshold_ms"] for h in hist] + [hist[-1]["threshold_ms"]]
        ax1.step([_dt_ms(x) for x in tx], [_dt_ms(y) for y in ty], where="post", color="tab:green", lw=2,
                 label="RO threshold")
        ys_all += ty
        rem = [(h["instant_time_ms"], h["remaining_min_event_time_ms"]) for h in hist
               if h.get("remaining_min_event_time_ms") is not None]
        if rem:
            ax1.plot([_dt_ms(x) for x, _ in rem], [_dt_ms(y) for _, y in rem], "v", color="tab:orange",
                     label="min event time of remaining logs")
            ys_all += [y for _, y in rem]
    lo_x, hi_x = min(xs_all), max(xs_all)
    ax1.plot([_dt_ms(lo_x), _dt_ms(hi_x)], [_dt_ms(lo_x), _dt_ms(hi_x)], "--", color="grey", lw=1,
             label="wall time")
    if ys_all:
        lo_y, hi_y = min(ys_all), max(ys_all)
        pad = max((hi_y - lo_y) * 0.08, 60_000)
        ax1.set_ylim(_dt_ms(int(lo_y - pad)), _dt_ms(int(hi_y + pad)))
    else:
        ax1.text(0.5, 0.5, "no event times recorded", transform=ax1.transAxes, ha="center")
    ax1.set_ylabel("event time (UTC)")
    ax1.set_title("RO threshold and ingestion against wall time", fontsize=10)
    ax1.legend(loc="upper left", fontsize=8)
    return lo_x, hi_x


def _plot_threshold_lag(ax2, hist: list, now_ms: int, sla_seconds: float | None) -> None:
    """Panel 2: the threshold lag, a saw-tooth that grows until the next compaction moves the
    threshold; the SLA as a line."""
    unit_ms, unit = 3_600_000, "hours"
    if hist:
        xs, ys = [], []
        ends = [h["instant_time_ms"] for h in hist[1:]] + [now_ms]
        for h, end in zip(hist, ends):
            end = max(end, h["instant_time_ms"])
            xs += [h["instant_time_ms"], end]
            ys += [h["instant_time_ms"] - h["threshold_ms"], end - h["threshold_ms"]]
        if max(ys) > 72 * 3_600_000:
            unit_ms, unit = 86_400_000, "days"
        ax2.plot([_dt_ms(x) for x in xs], [y / unit_ms for y in ys], color="tab:red",
                 label="threshold lag (wall time − RO threshold)")
        ax2.plot([_dt_ms(x) for x in xs[::2]], [y / unit_ms for y in ys[::2]], "o", color="tab:red", ms=3)
    else:
        ax2.text(0.5, 0.5, "no event-time compaction yet", transform=ax2.transAxes, ha="center")
    if sla_seconds:
        ax2.axhline(sla_seconds * 1000 / unit_ms, color="black", ls=":",
                    label=f"SLA ({human_duration(sla_seconds)})")
    ax2.set_ylim(bottom=0)
    ax2.set_ylabel(unit)
    ax2.set_title("threshold lag", fontsize=10)
    if hist or sla_seconds:
        ax2.legend(loc="upper left", fontsize=8)


def _plot_remaining_logs(ax3, hist: list) -> None:
    """Panel 3: what each compaction left in the logs (files as bars, KiB as a line)."""
    if hist:
        labels = [h["instant"][4:14] for h in hist]
        if len(set(labels)) < len(labels):  # compactions within a second: show the milliseconds
            labels = [h["instant"][4:] for h in hist]
        pos = list(range(len(hist)))
        files = [h.get("remaining_log_files") or 0 for h in hist]
        ax3.bar(pos, files, color="tab:purple", alpha=0.7, label="remaining log files")
        ax3.set_xticks(pos)
        ax3.set_xticklabels(labels, rotation=30, fontsize=7)
        ax3.set_ylabel("log files")
        ax3b = ax3.twinx()
        ax3b.plot(pos, [(h.get("remaining_log_bytes") or 0) / 1024 for h in hist], "s-", color="tab:brown",
                  label="remaining log KiB")
        ax3b.set_ylabel("KiB")
        h1, l1 = ax3.get_legend_handles_labels()
        h2, l2 = ax3b.get_legend_handles_labels()
        ax3.legend(h1 + h2, l1 + l2, loc="upper left", fontsize=8)
        ax3.set_xlabel("compaction instant (MMDDhhmmss" + ("SSS)" if len(labels[0]) > 10 else ")"))
    else:
        ax3.text(0.5, 0.5, "no event-time compaction yet", transform=ax3.transAxes, ha="center")
    ax3.set_title("left in log files after each compaction", fontsize=10)


def _html(data: Mapping[str, Any], png_name: str) -> str:
    from .hudi.index.stats import iso_ms

    f = data["figures"]
    e = html.escape
    rows = [
        ("table", f.get("table")), ("path", f.get("path")), ("now", f.get("now")),
        ("RO threshold", f.get("threshold") or "none yet"),
        ("threshold lag", human_duration(f.get("threshold_lag_seconds"))),
        ("SLA", "-" if f.get("sla_seconds") is None else
         f"{human_duration(f['sla_seconds'])} ({'BREACHED' if f.get('sla_breached') else 'ok'})"),
        ("max event time written", f.get("max_event_time_written") or "-"),
        ("min event time in logs", f.get("min_event_time") or "-"),
        ("remaining log files", f.get("remaining_log_files")),
        ("remaining log bytes", human_bytes(f.get("remaining_log_bytes"))),
        ("pending compactions", ", ".join(f.get("pending_compactions") or []) or "0"),
        ("pending plan age", human_duration(f.get("pending_plan_age_seconds"))),
        ("compactions / deltacommits", f"{f.get('compactions')} / {f.get('deltacommits')}"),
    ]
    hist_rows = "".join(
        "<tr>" + "".join(f"<td>{e(str(v))}</td>" for v in (
            h["instant"], h.get("threshold") or "-", human_duration(h.get("threshold_lag_seconds_at_compaction")),
            h.get("compacted_log_files"), h.get("remaining_log_files"), human_bytes(h.get("remaining_log_bytes")),
            iso_ms(h.get("remaining_min_event_time_ms")) or "-", h.get("link_mode") or "-",
            _seconds(h.get("execution_seconds")))) + "</tr>"
        for h in data["history"])
    warn = ""
    if f.get("sla_breached"):
        warn = (f"<p class=warn>WARNING: threshold lag {e(human_duration(f.get('threshold_lag_seconds')))} exceeds "
                f"the SLA of {e(human_duration(f.get('sla_seconds')))}</p>")
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Freshness of {e(str(f.get('table')))}</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 8px;text-align:left}}.warn{{color:#b00;font-weight:bold}}</style>
</head><body>
<h1>Event-time freshness: {e(str(f.get('table')))}</h1>
{warn}
<img src="{e(png_name)}" alt="freshness chart" width="1000">
<h2>Now</h2>
<table>{''.join(f'<tr><th>{e(k)}</th><td>{e(str(v))}</td></tr>' for k, v in rows)}</table>
<h2>Compactions</h2>
<table><tr><th>instant</th><th>RO threshold</th><th>lag at compaction</th><th>logs compacted</th>
<th>logs left</th><th>bytes left</th><th>min event time left</th><th>link mode</th><th>execution</th></tr>
{hist_rows}</table>
</body></html>
"""


def write_report(path: Any, output_dir: str, sla: Any = None, storage_options: Mapping[str, Any] | None = None,
                 *, now: _dt.datetime | None = None) -> dict:
    """Write ``freshness.png`` and ``index.html`` into ``output_dir`` (a local folder, made if
    missing; or an fsspec URI); return their paths and the figures."""
    if not output_dir:
        raise InvalidInputError("give an output directory for the report")
    data = report_data(path, storage_options=storage_options, sla=sla, now=now)
    png = render_png(data)
    page = _html(data, "freshness.png").encode()
    if "://" in output_dir and not output_dir.startswith("file://"):
        import fsspec

        base = output_dir.rstrip("/")
        png_path, html_path = f"{base}/freshness.png", f"{base}/index.html"
        for p, b in ((png_path, png), (html_path, page)):
            with fsspec.open(p, "wb") as fh:
                fh.write(b)
    else:
        d = os.path.abspath(output_dir[len("file://"):] if output_dir.startswith("file://") else output_dir)
        if os.path.exists(d) and not os.path.isdir(d):
            raise InvalidInputError(f"report output {d} exists and is not a directory")
        png_path, html_path = os.path.join(d, "freshness.png"), os.path.join(d, "index.html")
        tmp = None
        try:
            os.makedirs(d, exist_ok=True)
            for p, b in ((png_path, png), (html_path, page)):
                tmp = f"{p}.tmp-{os.getpid()}"
                with open(tmp, "wb") as fh:
                    fh.write(b)
                os.replace(tmp, p)
                tmp = None
        except OSError as e:  # a folder in the way, no permission, disk full: typed, no temp left
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            raise InvalidInputError(f"report output {d}: cannot write it: {e.strerror or e}") from None
    return {"png": png_path, "html": html_path, "png_bytes": len(png), **data["figures"],
            "history": data["history"]}
