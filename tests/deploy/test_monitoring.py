"""deploy/monitoring: the Prometheus alert rules and the Grafana dashboard are well formed, every runbook they link is
a heading of docs/operations.md, and every metric they read is one a real `arena api` and a real runner export.

The metric names come from scraping real processes: `arena api` on a test database and a CPU runner that joined
its pool with a token and ran one job (so that its counters and histograms have samples), with a job queued in a
pool that has no runner (so that the API reports queued jobs). `up` is the one series Prometheus makes itself:
the alerts use it for a scrape that failed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import jsonschema
import pytest
import yaml  # PyYAML, which the dev extra's kubernetes-validate depends on

from core.store import jobs
from core.submit.intake import SubmitRequest, submit
from core.submit.uploads import check_upload
from runner.auth import sign_headers
from tests.store.conftest import db_dsn, pg_dsn, pool, template_db  # noqa: F401  (fixtures, found by name)
from tests.store.fleet_processes import (
    FAST_SOLUTION,
    RATES,
    fleet_on,
    runner_row,
    runner_secret,
    start_fleet,
    submit_test,
    wait_final,
)
from tests.store.store_helpers import add_problems

ROOT = Path(__file__).resolve().parents[2]
MONITORING = ROOT / "deploy" / "monitoring"
ALERTS = MONITORING / "alerts.yaml"
DASHBOARD = MONITORING / "grafana-dashboard.json"
PROMETHEUS_CONFIG = MONITORING / "prometheus.yaml"
OPERATIONS = ROOT / "docs" / "operations.md"

# Series Prometheus makes for every target itself; no service exports them.
PROMETHEUS_OWN = {"up"}
PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset"}
SEVERITIES = {"critical", "warning", "info"}

# The part of Grafana's dashboard model that a dashboard file must have to import and show its panels: what a
# hand-edited file gets wrong (a panel without a query, a query without a refId, a grid position missing).
DASHBOARD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["title", "uid", "schemaVersion", "panels", "templating", "time"],
    "properties": {
        "title": {"type": "string", "minLength": 1},
        "uid": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,40}$"},
        "schemaVersion": {"type": "integer", "minimum": 30},
        "time": {"type": "object", "required": ["from", "to"]},
        "templating": {
            "type": "object",
            "required": ["list"],
            "properties": {
                "list": {
                    "type": "array",
                    "items": {"type": "object", "required": ["name", "type"]},
                }
            },
        },
        "panels": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["id", "type", "title", "gridPos"],
                "properties": {
                    "id": {"type": "integer"},
                    "type": {"enum": ["row", "timeseries", "stat", "gauge", "table", "bargauge", "text"]},
                    "gridPos": {
                        "type": "object",
                        "required": ["h", "w", "x", "y"],
                        "properties": {
                            "w": {"type": "integer", "minimum": 1, "maximum": 24},
                            "x": {"type": "integer", "minimum": 0, "maximum": 23},
                        },
                    },
                },
                "if": {"properties": {"type": {"not": {"enum": ["row", "text"]}}}},
                "then": {
                    "required": ["targets", "datasource"],
                    "properties": {
                        "targets": {
                            "type": "array",
                            "minItems": 1,
                            "items": {
                                "type": "object",
                                "required": ["refId", "expr"],
                                "properties": {"expr": {"type": "string", "minLength": 1}},
                            },
                        }
                    },
                },
            },
        },
    },
}


def _alert_rules() -> list[dict[str, Any]]:
    document = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    return [rule for group in document["groups"] for rule in group["rules"]]


def _dashboard() -> dict[str, Any]:
    return json.loads(DASHBOARD.read_text(encoding="utf-8"))


def _dashboard_exprs() -> list[str]:
    dashboard = _dashboard()
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]
    for variable in dashboard["templating"]["list"]:
        query = variable.get("query")
        if variable["type"] == "query":
            text = query["query"] if isinstance(query, dict) else query
            # label_values(metric, label) names a metric as its first argument.
            exprs.append(re.sub(r"label_values\((\w+),\s*\w+\)", r"\1", text))
    return exprs


def heading_anchors(markdown: str) -> set[str]:
    """GitHub's anchors of the headings: lower case, punctuation dropped, spaces to hyphens."""
    anchors = set()
    in_fence = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        if in_fence or not line.startswith("#"):
            continue
        title = line.lstrip("#").strip().lower()
        anchors.add(re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", title)))
    return anchors


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads: identifiers that are not functions, keywords, label names
    (in braces and in by/on/... lists), strings or durations."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    text = re.sub(r"\{[^}]*\}", "", text)
    text = re.sub(r"\[[^\]]*\]", "", text)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", text)
    names = set()
    for match in re.finditer(r"([A-Za-z_:][\w:]*)\s*(\()?", text):
        if match.group(2) is None and match.group(1) not in PROMQL_WORDS:
            names.add(match.group(1))
    return names


def equality_matchers(expr: str) -> list[tuple[str, str, str]]:
    """(metric, label, value) for every `metric{label="value"}` in the expression."""
    found = []
    for selector in re.finditer(r"([A-Za-z_:][\w:]*)\{([^}]*)\}", expr):
        for label, value in re.findall(r'(\w+)\s*=\s*"([^"$]*)"', selector.group(2)):
            found.append((selector.group(1), label, value))
    return found


def exposition(text: str) -> dict[str, set[str]]:
    """Each exported series name (with a histogram's _bucket, _sum and _count) and the label pairs its samples
    carry, as `label=value` strings, from Prometheus's text format."""
    series: dict[str, set[str]] = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            series.setdefault(name, set())
            if kind == "histogram":
                for suffix in ("_bucket", "_sum", "_count"):
                    series.setdefault(name + suffix, set())
        elif line and not line.startswith("#"):
            sample = re.match(r"([A-Za-z_:][\w:]*)(?:\{(.*)\})? ", line)
            assert sample is not None, f"not an exposition line: {line!r}"
            pairs = re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', sample.group(2) or "")
            series.setdefault(sample.group(1), set()).update(f"{k}={v}" for k, v in pairs)
    return series


# -- the files alone ---------------------------------------------------------------------------------------------


def test_the_alert_rules_have_prometheus_rule_group_structure() -> None:
    document = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    assert set(document) == {"groups"}
    names = [group["name"] for group in document["groups"]]
    assert len(names) == len(set(names)), f"rule group names repeat: {names}"
    rules = _alert_rules()
    assert len(rules) >= 6
    alerts = [rule["alert"] for rule in rules]
    assert len(alerts) == len(set(alerts)), f"alert names repeat: {alerts}"
    for rule in rules:
        assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}, rule["alert"]
        assert re.fullmatch(r"[A-Z][A-Za-z]+", rule["alert"]), rule["alert"]
        assert isinstance(rule["expr"], str) and rule["expr"].strip(), rule["alert"]
        assert re.fullmatch(r"\d+[smh]", rule["for"]), f"{rule['alert']}: for {rule['for']!r}"
        assert rule["labels"]["severity"] in SEVERITIES, rule["alert"]
        assert rule["annotations"]["summary"].strip(), rule["alert"]
        assert rule["annotations"]["runbook_url"].startswith("docs/operations.md#"), rule["alert"]


def test_every_runbook_link_is_a_heading_of_the_operations_guide() -> None:
    anchors = heading_anchors(OPERATIONS.read_text(encoding="utf-8"))
    linked = {rule["alert"]: rule["annotations"]["runbook_url"].split("#", 1)[1] for rule in _alert_rules()}
    missing = {alert: anchor for alert, anchor in linked.items() if anchor not in anchors}
    assert not missing, f"runbook links to no heading of docs/operations.md: {missing}"
    # The four runbooks the guide promises each have an alert that points at them, but a bad release (no metric
    # tells a bad release from its symptoms; its runbook is reached from the others).
    assert {
        "runbook-a-runner-is-quarantined",
        "runbook-the-queue-backs-up",
        "runbook-the-database-is-down",
    } <= set(linked.values())
    assert "runbook-a-bad-release" in anchors


def test_the_alerts_name_the_scrape_jobs_of_the_prometheus_configuration() -> None:
    config = yaml.safe_load(PROMETHEUS_CONFIG.read_text(encoding="utf-8"))
    jobs_configured = {job["job_name"] for job in config["scrape_configs"]}
    assert config["rule_files"] == ["alerts.yaml"]
    named = {value for rule in _alert_rules() for _, label, value in equality_matchers(rule["expr"]) if label == "job"}
    assert named and named <= jobs_configured, f"alerts name scrape jobs {named}, configured: {jobs_configured}"


def test_promtool_accepts_the_rules_and_the_configuration() -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed (apt-get install prometheus)")
    for argv in ([promtool, "check", "rules", str(ALERTS)], [promtool, "check", "config", str(PROMETHEUS_CONFIG)]):
        checked = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=MONITORING)
        assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_dashboard_is_grafana_dashboard_json() -> None:
    dashboard = _dashboard()
    jsonschema.validate(dashboard, DASHBOARD_SCHEMA)
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids)), f"panel ids repeat: {ids}"
    variables = {variable["name"] for variable in dashboard["templating"]["list"]}
    # Every $variable a panel uses is defined, and every panel reads the chosen Prometheus data source.
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            used = set(re.findall(r"\$(\w+)", target["expr"]))
            assert used <= variables, f"panel {panel['title']!r} uses undefined {used - variables}"
        if panel["type"] != "row":
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
    titles = " ".join(panel["title"].lower() for panel in dashboard["panels"])
    for subject in ("queue", "runners", "quarantined", "errors"):
        assert subject in titles, f"no panel about {subject}"


def test_metric_names_are_read_off_promql() -> None:
    expr = 'histogram_quantile(0.95, sum by (le, phase) (rate(arena_runner_phase_seconds_bucket{a="b"}[10m])))'
    assert metric_names(expr) == {"arena_runner_phase_seconds_bucket"}
    expr = 'sum by (pool) (x{state="queued"}) > 0 unless on (pool) sum by (pool) (y{state="active"}) > 0'
    assert metric_names(expr) == {"x", "y"}
    assert equality_matchers('x{state="queued",pool=~"$pool"}') == [("x", "state", "queued")]


# -- against real processes -------------------------------------------------------------------------------------


async def _scrape(url: str, headers: dict[str, str] | None = None) -> str:
    async with aiohttp.ClientSession() as session:
        async with session.get(url, headers=headers or {}, timeout=aiohttp.ClientTimeout(total=30)) as response:
            assert response.status == 200, await response.text()
            return await response.text()


async def test_every_metric_the_alerts_and_the_dashboard_read_is_exported(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    await add_problems(pool)
    async with fleet_on(db_dsn) as fleet_:
        await start_fleet(pool, fleet_, ["mon-a"])
        # One job run to its end, so that the runner's counters and phase histogram have samples.
        ran = await submit_test(pool, "alice", FAST_SOLUTION)
        assert (await wait_final(pool, ran.job_id, fleet_)).state == "done"
        # One job for a pool with no runner: it stays queued.
        waiting = await submit(
            pool,
            SubmitRequest("discord:bob", "bob", "vector_add", check_upload("s.py", FAST_SOLUTION), "h100", mode="test"),
            RATES,
        )
        assert (await jobs.get_job(pool, waiting.job_id)).state == "queued"  # type: ignore[union-attr]

        api = exposition(await _scrape(fleet_.api_url + "/metrics"))
        row = await runner_row(pool, "mon-a")
        assert row.url is not None
        headers = sign_headers(await runner_secret(pool, "mon-a"), "GET", "/metrics")
        runner = exposition(await _scrape(row.url + "/metrics", headers))

    exported = set(api) | set(runner) | PROMETHEUS_OWN
    assert {"arena_jobs", "arena_fleet_runners_quarantined", "arena_runner_phase_seconds_bucket"} <= exported
    exprs = {rule["alert"]: rule["expr"] for rule in _alert_rules()}
    exprs |= {f"dashboard: {expr}": expr for expr in _dashboard_exprs()}
    read = {where: metric_names(expr) for where, expr in exprs.items()}
    unknown = {where: names - exported for where, names in read.items() if names - exported}
    assert not unknown, f"metrics no service exports: {unknown}\nexported: {sorted(exported)}"
    assert all(read.values()), f"an expression reads no metric: {[w for w, n in read.items() if not n]}"

    # The label values the API's series are selected by are ones its samples carry (a state spelt wrong would
    # select nothing, and the alert would never fire).
    for where, expr in exprs.items():
        for metric, label, value in equality_matchers(expr):
            if metric in api:
                assert f"{label}={value}" in api[metric], f"{where}: no {metric} sample has {label}={value!r}"
    assert "pool=h100" in api["arena_jobs"] and "state=queued" in api["arena_jobs"]
    assert {"pool=cpu", "state=active"} <= api["arena_fleet_runners_heard"]
    assert "outcome=passed" in runner["arena_runner_jobs_total"]
