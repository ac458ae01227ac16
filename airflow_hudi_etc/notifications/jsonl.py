"""``JsonLinesNotifier``: append one JSON line per alert to a file (local path or fsspec URI).

The lightest alert sink that needs no mail or chat server: a log shipper, a cron job or a test
reads the file. Use it where a callback goes::

    EventTimeCompactionSensor(..., on_failure_callback=JsonLinesNotifier(path="/var/log/hudi-etc/alerts.jsonl"))

Each line: ``{"at", "dag_id", "task_id", "run_id", "logical_date", "try_number", "state",
"exception_type", "exception", "message", "table_path"}`` (``message``: the notifier's rendered
``message`` template, ``table_path``: the task's when it has one; ``state``: ``"failed"``, ...).

An alert never depends on fields a run may lack: a template that fails to render (e.g. ``{{ ds }}``
or ``{{ data_interval_end.isoformat() }}`` in a manually triggered run without a logical date) is
written unrendered, with the error in ``render_error``; a missing field is written as null.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from typing import Any, Sequence

from airflow.sdk import BaseNotifier


class JsonLinesNotifier(BaseNotifier):
    """:param path: file to append to (templated); None: the ``HUDI_ETC_ALERT_FILE`` environment
        variable at notification time (nothing is written when that is unset either).
    :param message: free text (templated), e.g. ``"{{ ti.task_id }} failed for {{ ds }}"``.
    """

    template_fields: Sequence[str] = ("path", "message")

    def __init__(self, path: str | None = None, message: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.path = path
        self.message = message
        self._templates = {"path": path, "message": message}

    def render_template_fields(self, context, jinja_env=None) -> None:
        # BaseNotifier renders in place; one instance serves many tasks (default_args): start from
        # the templates every time, not from the previous task's rendering. Each field on its own:
        # one that fails keeps its template (the alert is still sent)
        self._render_errors: dict[str, str] = {}
        for k, v in self._templates.items():
            setattr(self, k, v)
        try:
            dag = context.get("dag")
            env = jinja_env or self.get_template_env(dag=dag)
        except Exception as e:  # noqa: BLE001 - no template environment: send the templates as they are
            self._render_errors["*"] = f"{type(e).__name__}: {e}"
            return
        for k, v in self._templates.items():
            try:
                self._do_render_template_fields(self, [k], context, env, set())
            except Exception as e:  # noqa: BLE001 - an alert must not be lost to a template
                setattr(self, k, v)
                self._render_errors[k] = f"{type(e).__name__}: {e}"
                self.log.warning("JsonLinesNotifier: %s not rendered (%s); sent as written", k, e)

    def record(self, context: Any) -> dict:
        ti = context.get("ti") or context.get("task_instance")
        task = context.get("task")
        exc = context.get("exception")
        logical = context.get("logical_date")
        state = getattr(ti, "state", None)
        state = getattr(state, "value", state)  # the enum's value ("failed"), not its repr
        if not state and exc is not None:  # a failure callback runs before the state is saved
            state = "failed"
        out = {
            "at": _dt.datetime.now(_dt.timezone.utc).isoformat(),
            "dag_id": getattr(context.get("dag"), "dag_id", None) or getattr(ti, "dag_id", None),
            "task_id": getattr(ti, "task_id", None),
            "run_id": context.get("run_id") or getattr(ti, "run_id", None),
            "logical_date": logical.isoformat() if hasattr(logical, "isoformat") else logical,
            "try_number": getattr(ti, "try_number", None),
            "state": str(state) if state else None,
            "exception_type": type(exc).__name__ if exc is not None else None,
            "exception": str(exc)[:2000] if exc is not None else None,
            "message": self.message,
            "table_path": getattr(task, "table_path", None),
        }
        errors = getattr(self, "_render_errors", None)
        if errors:
            out["render_error"] = errors
        return out

    def notify(self, context: Any) -> None:
        path = self.path or os.environ.get("HUDI_ETC_ALERT_FILE")
        if not path:
            self.log.warning("JsonLinesNotifier: no path and HUDI_ETC_ALERT_FILE unset; alert dropped")
            return
        line = json.dumps(self.record(context), default=str) + "\n"
        if "://" in path and not path.startswith("file://"):
            import fsspec

            with fsspec.open(path, "a") as f:
                f.write(line)
            return
        path = path[len("file://"):] if path.startswith("file://") else path
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        # one write of one line in append mode: lines of concurrent tasks do not interleave
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
