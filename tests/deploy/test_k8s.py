"""deploy/k8s: every overlay renders with `kubectl kustomize`, every object it renders validates, and the
invariants an operator relies on hold in each.

Validation: the Kubernetes objects against the API schemas of Kubernetes 1.33 that kubernetes-validate ships
(strict: an unknown field fails), 1.33 being the first release that enables pods' user namespaces by default, which
the runners' sandbox needs. KEDA's ScaledObject and CloudNativePG's Cluster are custom resources outside those
schemas: they validate against the small schemas below, written from the fields the projects document (KEDA's
ScaledObject specification and prometheus scaler page; CloudNativePG's Cluster API reference), strict where we set
fields, so that a misspelt field fails here and not in the cluster.
"""

from __future__ import annotations

import base64
import functools
import importlib.util
import os
import re
import shutil
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
K8S = REPO / "deploy" / "k8s"
KUBERNETES_VERSION = "1.33.0"
OVERLAYS = ("amd", "b200", "dev", "h100")
# What the runners need that kubernetes-validate's schemas cannot say: the pool's label key, everywhere.
POOL_LABEL = "kernel-arena.dev/pool"
GPU_LABEL = "kernel-arena.dev/gpu"
GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")
PROBE_PORTS = {"api": 8800, "bot": 8081, "web": 8080, "runner": 8700}
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]

Obj = dict[str, Any]


def _kubectl() -> str:
    found = shutil.which("kubectl")
    if found is None:
        pytest.skip(
            "needs kubectl (Debian's kubectl package, or scripts/setup-deploy-tools.sh) for `kubectl kustomize`"
        )
    return found


@functools.cache
def _render_dir(path: str) -> tuple[Obj, ...]:
    done = subprocess.run([_kubectl(), "kustomize", path], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"kubectl kustomize {path} failed:\n{done.stderr}"
    return tuple(doc for doc in yaml.safe_load_all(done.stdout) if doc)


def render(relative: str) -> list[Obj]:
    """The objects `kubectl kustomize deploy/k8s/<relative>` prints."""
    return list(_render_dir(str(K8S / relative)))


def render_with_cnpg(tmp_path: Path) -> list[Obj]:
    """The h100 overlay with the CloudNativePG component, as an operator lists it (paths relative: kustomize
    refuses absolute ones)."""
    build = tmp_path / "with-cnpg"
    build.mkdir()
    overlay = os.path.relpath(K8S / "overlays" / "h100", build)
    component = os.path.relpath(K8S / "components" / "cnpg", build)
    (build / "kustomization.yaml").write_text(
        f"resources:\n  - {overlay}\ncomponents:\n  - {component}\n", encoding="utf-8"
    )
    return list(_render_dir(str(build)))


def of_kind(objects: list[Obj], kind: str) -> list[Obj]:
    return [o for o in objects if o["kind"] == kind]


def component(obj: Obj) -> str | None:
    return obj["metadata"].get("labels", {}).get("app.kubernetes.io/component")


def runners(objects: list[Obj]) -> list[Obj]:
    return [d for d in of_kind(objects, "Deployment") if component(d) == "runner"]


def pod_template(workload: Obj) -> Obj:
    return workload["spec"]["template"]


def containers(workload: Obj) -> list[Obj]:
    spec = pod_template(workload)["spec"]
    return [*spec.get("initContainers", []), *spec["containers"]]


def env_of(container: Obj) -> dict[str, Obj]:
    return {e["name"]: e for e in container.get("env", [])}


def selects(selector: Obj, labels: dict[str, str]) -> bool:
    """A LabelSelector's verdict on a set of labels (matchLabels and matchExpressions)."""
    for key, value in selector.get("matchLabels", {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions", []):
        key, operator, values = expression["key"], expression["operator"], expression.get("values", [])
        held = {"In": key in labels and labels[key] in values, "NotIn": labels.get(key) not in values}
        held |= {"Exists": key in labels, "DoesNotExist": key not in labels}
        if not held[operator]:
            return False
    return True


def pods(objects: list[Obj]) -> list[tuple[str, dict[str, str]]]:
    """Each workload's name and its pods' labels."""
    workloads = [o for o in objects if o["kind"] in ("Deployment", "StatefulSet", "DaemonSet", "Job")]
    return [(w["metadata"]["name"], pod_template(w)["metadata"].get("labels", {})) for w in workloads]


def peer_pods(peer: Obj, objects: list[Obj]) -> set[str]:
    """The rendered workloads a NetworkPolicy peer selects in the policy's own namespace (a peer with a
    namespaceSelector reaches other namespaces, which this cannot list)."""
    if "podSelector" not in peer or "namespaceSelector" in peer:
        return set()
    return {name for name, labels in pods(objects) if selects(peer["podSelector"], labels)}


# --- custom resources: schemas from the projects' documented fields ---------------------------------------------

_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
_METADATA = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": {"type": "string", "pattern": r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"}},
}
# keda.sh/v1alpha1 ScaledObject: the ScaledObject specification (spec fields) and the prometheus scaler's
# parameters (trigger metadata, every value a string).
SCALED_OBJECT_SCHEMA: Obj = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "keda.sh/v1alpha1"},
        "kind": {"const": "ScaledObject"},
        "metadata": _METADATA,
        "spec": {
            "type": "object",
            "required": ["scaleTargetRef", "triggers"],
            "additionalProperties": False,
            "properties": {
                "scaleTargetRef": {
                    "type": "object",
                    "required": ["name"],
                    "additionalProperties": False,
                    "properties": {
                        "apiVersion": {"type": "string"},
                        "kind": {"type": "string"},
                        "name": {"type": "string"},
                        "envSourceContainerName": {"type": "string"},
                    },
                },
                "pollingInterval": {"type": "integer", "minimum": 1},
                "cooldownPeriod": {"type": "integer", "minimum": 0},
                "initialCooldownPeriod": {"type": "integer", "minimum": 0},
                "idleReplicaCount": {"type": "integer", "minimum": 0},
                "minReplicaCount": {"type": "integer", "minimum": 0},
                "maxReplicaCount": {"type": "integer", "minimum": 1},
                "fallback": {"type": "object"},
                "advanced": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "restoreToOriginalReplicaCount": {"type": "boolean"},
                        "horizontalPodAutoscalerConfig": {
                            "type": "object",
                            "additionalProperties": False,
                            "properties": {"name": {"type": "string"}, "behavior": {"type": "object"}},
                        },
                        "scalingModifiers": {"type": "object"},
                    },
                },
                "triggers": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "required": ["type", "metadata"],
                        "additionalProperties": False,
                        "properties": {
                            "type": {"type": "string"},
                            "name": {"type": "string"},
                            "metadata": _STRING_MAP,
                            "metricType": {"enum": ["AverageValue", "Value", "Utilization"]},
                            "useCachedMetrics": {"type": "boolean"},
                            "authenticationRef": {"type": "object"},
                        },
                        "if": {"properties": {"type": {"const": "prometheus"}}},
                        "then": {
                            "properties": {
                                "metadata": {
                                    "required": ["serverAddress", "query", "threshold"],
                                    "additionalProperties": False,
                                    "properties": {
                                        name: {"type": "string"}
                                        for name in (
                                            "serverAddress",
                                            "query",
                                            "threshold",
                                            "activationThreshold",
                                            "namespace",
                                            "customHeaders",
                                            "ignoreNullValues",
                                            "queryParameters",
                                            "unsafeSsl",
                                            "timeout",
                                        )
                                    },
                                }
                            }
                        },
                    },
                },
            },
        },
    },
}
# postgresql.cnpg.io/v1 Cluster: ClusterSpec's fields that we set (the rest of the API reference is open).
CNPG_CLUSTER_SCHEMA: Obj = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "postgresql.cnpg.io/v1"},
        "kind": {"const": "Cluster"},
        "metadata": _METADATA,
        "spec": {
            "type": "object",
            "required": ["instances", "storage"],
            "properties": {
                "instances": {"type": "integer", "minimum": 1},
                "imageName": {"type": "string"},
                "primaryUpdateStrategy": {"enum": ["unsupervised", "supervised"]},
                "bootstrap": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "initdb": {
                            "type": "object",
                            "additionalProperties": False,
                            "properties": {
                                "database": {"type": "string"},
                                "owner": {"type": "string"},
                                "secret": {"type": "object"},
                                "postInitSQL": {"type": "array", "items": {"type": "string"}},
                                "postInitApplicationSQL": {"type": "array", "items": {"type": "string"}},
                                "postInitTemplateSQL": {"type": "array", "items": {"type": "string"}},
                            },
                        },
                        "recovery": {"type": "object"},
                        "pg_basebackup": {"type": "object"},
                    },
                },
                "postgresql": {
                    "type": "object",
                    "properties": {"parameters": _STRING_MAP},
                },
                "storage": {
                    "type": "object",
                    "required": ["size"],
                    "properties": {"size": {"type": "string"}, "storageClass": {"type": "string"}},
                },
                "resources": {"type": "object"},
            },
        },
    },
}
CUSTOM_SCHEMAS = {
    ("keda.sh/v1alpha1", "ScaledObject"): SCALED_OBJECT_SCHEMA,
    ("postgresql.cnpg.io/v1", "Cluster"): CNPG_CLUSTER_SCHEMA,
}


def validation_errors(obj: Obj) -> list[str]:
    """Why `obj` is invalid (empty when it is valid)."""
    where = f"{obj.get('kind')} {obj.get('metadata', {}).get('name')}"
    schema = CUSTOM_SCHEMAS.get((obj.get("apiVersion"), obj.get("kind")))
    if schema is not None:
        return [
            f"{where}: {e.message} at {list(e.absolute_path)}"
            for e in jsonschema.Draft7Validator(schema).iter_errors(obj)
        ]
    try:
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        return [f"{where}: {exc.message} at {list(exc.path)}"]
    except kubernetes_validate.SchemaNotFoundError:
        return [f"{where}: no schema for {obj.get('apiVersion')} {obj.get('kind')}"]
    return []


def every_build(tmp_path: Path) -> Iterator[tuple[str, list[Obj]]]:
    for overlay in OVERLAYS:
        yield f"overlays/{overlay}", render(f"overlays/{overlay}")
    for pool in ("h100-autoscaled", "b200-autoscaled"):
        yield f"pools/{pool}", render(f"pools/{pool}")
    yield "overlays/h100 + components/cnpg", render_with_cnpg(tmp_path)


# --- rendering and validation ------------------------------------------------------------------------------------


def test_the_overlays_are_the_four_pools_and_each_renders() -> None:
    assert sorted(p.name for p in (K8S / "overlays").iterdir() if p.is_dir()) == list(OVERLAYS)
    for overlay in OVERLAYS:
        objects = render(f"overlays/{overlay}")
        kinds = {o["kind"] for o in objects}
        assert {"Namespace", "Deployment", "Service", "Job", "NetworkPolicy", "PodDisruptionBudget", "Secret"} <= kinds
        assert all(
            o["metadata"].get("namespace") == "kernel-arena"
            for o in objects
            if o["kind"] != "Namespace" and o["kind"] not in ("ClusterRole", "ClusterRoleBinding")
        ), overlay


def test_every_rendered_object_validates(tmp_path: Path) -> None:
    errors: list[str] = []
    checked = 0
    for build, objects in every_build(tmp_path):
        for obj in objects:
            errors += [f"{build}: {error}" for error in validation_errors(obj)]
            checked += 1
    assert not errors, "\n".join(errors)
    assert checked > 100


def test_the_validation_refuses_what_a_cluster_would() -> None:
    """The checks above can fail: a misspelt field of a Deployment and of a ScaledObject are both caught."""
    runner = runners(render("overlays/h100"))[0]
    broken = yaml.safe_load(yaml.safe_dump(runner))
    pod_template(broken)["spec"]["nodeSelectr"] = {GPU_LABEL: "h100"}
    assert validation_errors(broken)
    scaled = of_kind(render("pools/h100-autoscaled"), "ScaledObject")[0]
    wrong = yaml.safe_load(yaml.safe_dump(scaled))
    wrong["spec"]["triggers"][0]["metadata"]["treshold"] = "2"
    assert validation_errors(wrong)


# --- invariants --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_each_runner_pod_holds_one_gpu_on_its_pools_nodes(overlay: str) -> None:
    found = runners(render(f"overlays/{overlay}"))
    assert found, f"{overlay} has no runner Deployment"
    for runner in found:
        pool = runner["metadata"]["labels"][POOL_LABEL]
        spec = pod_template(runner)["spec"]
        assert spec["nodeSelector"][GPU_LABEL] == pool, runner["metadata"]["name"]
        assert selects(runner["spec"]["selector"], pod_template(runner)["metadata"]["labels"])
        assert runner["spec"]["selector"]["matchLabels"][POOL_LABEL] == pool
        (container,) = spec["containers"]
        limits = container["resources"]["limits"]
        gpus = {name: limits[name] for name in GPU_RESOURCES if name in limits}
        if pool == "cpu":
            assert gpus == {}
            assert env_of(container)["RUNNER_DEVICE"]["value"] == "cpu"
        else:
            assert list(gpus.values()) == [1], f"{pool}: {gpus}"
            resource = next(iter(gpus))
            assert any(t.get("key") == resource for t in spec.get("tolerations", [])), f"{pool} tolerates no {resource}"
            assert env_of(container)["RUNNER_DEVICE"]["value"] == "gpu"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_each_runner_joins_its_pool_with_the_token_secret_and_its_pod_address(overlay: str) -> None:
    objects = render(f"overlays/{overlay}")
    secrets = {s["metadata"]["name"]: s for s in of_kind(objects, "Secret")}
    for runner in runners(objects):
        spec = pod_template(runner)["spec"]
        (container,) = spec["containers"]
        env = env_of(container)
        assert env["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
        args = container["args"]
        assert args[args.index("--advertise") + 1] == "http://$(POD_IP):8700"
        assert args[args.index("--join") + 1] == "$(RUNNER_JOIN_URL)"
        assert env["RUNNER_JOIN_URL"]["value"] == "http://arena-api:8800"
        token_path = Path(args[args.index("--token-file") + 1])
        mount = next(m for m in container["volumeMounts"] if m["mountPath"] == str(token_path.parent))
        volume = next(v for v in spec["volumes"] if v["name"] == mount["name"])
        secret = secrets[volume["secret"]["secretName"]]  # a Secret this overlay renders, by its generated name
        assert any(item["path"] == token_path.name for item in volume["secret"]["items"])
        assert base64.b64decode(secret["data"]["token"]).decode().startswith("arena-join-")


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_each_runner_drains_within_its_grace_period_under_a_disruption_budget(overlay: str) -> None:
    objects = render(f"overlays/{overlay}")
    budgets = of_kind(objects, "PodDisruptionBudget")
    for runner in runners(objects):
        spec = pod_template(runner)["spec"]
        (container,) = spec["containers"]
        drain_s = float(env_of(container)["RUNNER_DRAIN_TIMEOUT_S"]["value"])
        assert spec["terminationGracePeriodSeconds"] > drain_s
        assert "kill -TERM 1" in " ".join(container["lifecycle"]["preStop"]["exec"]["command"])
        labels = pod_template(runner)["metadata"]["labels"]
        covering = [b for b in budgets if selects(b["spec"]["selector"], labels)]
        assert len(covering) == 1, f"{runner['metadata']['name']}: {len(covering)} disruption budgets"
        other_pools = [r for r in runners(objects) if r is not runner]
        assert not any(
            selects(covering[0]["spec"]["selector"], pod_template(r)["metadata"]["labels"]) for r in other_pools
        )


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_runners_talk_only_to_the_dispatchers_and_the_api(overlay: str) -> None:
    objects = render(f"overlays/{overlay}")
    policies = of_kind(objects, "NetworkPolicy")
    names = {name: labels for name, labels in pods(objects)}
    dispatchers = {"arena-api", "arena-bot"}
    for runner in runners(objects):
        labels = pod_template(runner)["metadata"]["labels"]
        covering = [p for p in policies if selects(p["spec"]["podSelector"], labels)]
        assert covering, f"no NetworkPolicy selects {runner['metadata']['name']}"
        for policy in covering:
            assert set(policy["spec"]["policyTypes"]) == {"Ingress", "Egress"}
            for rule in policy["spec"].get("ingress", []):
                assert [p["port"] for p in rule["ports"]] == [8700]
                sources = set().union(*(peer_pods(peer, objects) for peer in rule["from"]))
                assert sources == dispatchers, f"{policy['metadata']['name']} lets in {sources}"
                assert all("ipBlock" not in peer and "namespaceSelector" not in peer for peer in rule["from"])
            for rule in policy["spec"]["egress"]:
                ports = {p["port"] for p in rule["ports"]}
                if ports == {53}:
                    assert all(
                        peer["podSelector"]["matchExpressions"][0]["values"] == ["kube-dns"] for peer in rule["to"]
                    )
                    continue
                assert ports == {8800}
                targets = set().union(*(peer_pods(peer, objects) for peer in rule["to"]))
                assert targets == {"arena-api"}
                assert all("ipBlock" not in peer and "namespaceSelector" not in peer for peer in rule["to"])
    assert names["arena-api"].get("kernel-arena.dev/dispatcher") == "true"
    assert names["arena-web"].get("kernel-arena.dev/dispatcher") is None


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_service_container_has_readiness_and_liveness_probes_on_its_port(overlay: str) -> None:
    for deployment in of_kind(render(f"overlays/{overlay}"), "Deployment"):
        role = component(deployment)
        if role not in PROBE_PORTS:
            continue
        for container in pod_template(deployment)["spec"]["containers"]:
            ports = {p["name"]: p["containerPort"] for p in container["ports"]}
            for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
                http = container[probe]["httpGet"]
                port = ports.get(http["port"], http["port"])
                assert (http["path"], port) == (path, PROBE_PORTS[role]), f"{deployment['metadata']['name']} {probe}"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_images_carry_an_explicit_version_never_latest(overlay: str) -> None:
    objects = render(f"overlays/{overlay}")
    images = [c["image"] for o in objects if "template" in o.get("spec", {}) for c in containers(o)]
    images += [o["spec"]["imageName"] for o in of_kind(objects, "Cluster")]
    assert images
    for image in images:
        name, _, tag = image.rpartition(":")
        assert name and tag and "/" not in tag, f"{image} has no tag"
        assert tag != "latest" and "@" not in name
        if name.startswith("kernel-arena-"):
            assert tag == VERSION, f"{image}: the project is {VERSION}"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_core_deployments_have_their_replicas_and_strategies(overlay: str) -> None:
    objects = render(f"overlays/{overlay}")
    deployments = {d["metadata"]["name"]: d for d in of_kind(objects, "Deployment")}
    bot = deployments["arena-bot"]
    assert bot["spec"]["strategy"]["type"] == "Recreate"
    assert bot["spec"]["replicas"] == (0 if overlay == "dev" else 1)  # dev: no Discord token on a laptop
    assert deployments["arena-api"]["spec"]["replicas"] >= 2
    for name in ("arena-api", "arena-bot", "arena-web"):
        (wait,) = pod_template(deployments[name])["spec"]["initContainers"]
        assert "until arena db status" in wait["command"][-1], name
        assert wait["env"] == pod_template(deployments[name])["spec"]["containers"][0]["env"][:1]
    (migrate,) = of_kind(objects, "Job")
    assert migrate["metadata"]["name"] == f"arena-migrate-{VERSION}"
    assert pod_template(migrate)["spec"]["containers"][0]["args"] == ["db", "migrate"]
    config = next(c for c in of_kind(objects, "ConfigMap") if c["metadata"]["name"].startswith("arena-config"))
    assert config["data"]["ARENA_MIGRATE_ON_START"] == "false"


@pytest.mark.parametrize("overlay", ["amd", "b200", "h100"])
def test_the_secrets_shipped_are_placeholders(overlay: str) -> None:
    for secret in of_kind(render(f"overlays/{overlay}"), "Secret"):
        for key, value in secret["data"].items():
            assert "CHANGE-ME" in base64.b64decode(value).decode(), f"{secret['metadata']['name']}.{key}"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_runner_pod_allows_exactly_what_its_sandbox_needs(overlay: str) -> None:
    for runner in runners(render(f"overlays/{overlay}")):
        spec = pod_template(runner)["spec"]
        (container,) = spec["containers"]
        context = container["securityContext"]
        assert spec["securityContext"]["runAsNonRoot"] is True
        assert context["capabilities"] == {"drop": ["ALL"]}
        assert context["allowPrivilegeEscalation"] is False
        assert "privileged" not in context
        assert context["seccompProfile"] == {"type": "Unconfined"}
        assert context["appArmorProfile"] == {"type": "Unconfined"}
        required = env_of(container)["RUNNER_SANDBOX_REQUIRED"]["value"]
        if overlay == "dev":  # a laptop cluster rarely gives pods user namespaces: the network level
            assert required == "network"
            assert "hostUsers" not in spec and "procMount" not in context
        else:
            assert required == "full"
            assert spec["hostUsers"] is False
            assert context["procMount"] == "Unmasked"


def test_the_refusal_message_names_the_settings_the_manifests_set() -> None:
    """What a refusing runner tells the operator (runner/host/sandbox_needs.py) is what the runner pod sets."""
    from runner.host.sandbox_needs import KUBERNETES_HINT

    for setting in (
        "hostUsers: false",
        "procMount: Unmasked",
        "seccompProfile Unconfined",
        "appArmorProfile Unconfined",
    ):
        assert setting in KUBERNETES_HINT
    manifest = (K8S / "runner" / "deployment.yaml").read_text(encoding="utf-8")
    for line in ("hostUsers: false", "procMount: Unmasked", "type: Unconfined", "RUNNER_SANDBOX_REQUIRED"):
        assert line in manifest


def test_the_amd_pool_is_marked_planned() -> None:
    (runner,) = runners(render("overlays/amd"))
    assert pod_template(runner)["metadata"]["annotations"]["kernel-arena.dev/image-status"] == "planned"
    assert containers(runner)[0]["image"].startswith("kernel-arena-runner-rocm:")


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_node_preparation_is_privileged_and_only_where_nvidia_gpus_are(overlay: str) -> None:
    daemonsets = of_kind(render(f"overlays/{overlay}"), "DaemonSet")
    if overlay in ("amd", "dev"):
        assert daemonsets == []
        return
    (prep,) = daemonsets
    (container,) = pod_template(prep)["spec"]["containers"]
    assert container["securityContext"]["privileged"] is True
    assert env_of(container)["LOCK_CLOCKS"]["value"] == "true"
    assert "nvidia.com/gpu" not in container["resources"].get("limits", {})


@pytest.mark.parametrize("pool", ["h100", "b200"])
def test_keda_scales_each_pool_on_its_own_queue(pool: str) -> None:
    objects = render(f"pools/{pool}-autoscaled")
    (scaled,) = of_kind(objects, "ScaledObject")
    (runner,) = runners(objects)
    assert scaled["spec"]["scaleTargetRef"]["name"] == runner["metadata"]["name"] == f"runner-{pool}"
    assert "replicas" not in runner["spec"], "the autoscaler owns the replica count"
    (trigger,) = scaled["spec"]["triggers"]
    assert trigger["type"] == "prometheus"
    query = trigger["metadata"]["query"]
    assert f'pool="{pool}"' in query
    metric = re.match(r"sum\(max by \(state\) \((\w+)\{", query)
    assert metric is not None, query
    # The API exports it (api/app.py's /metrics; tests/deploy/test_monitoring.py scrapes a real one).
    assert f"# HELP {metric.group(1)} " in (REPO / "api" / "app.py").read_text(encoding="utf-8")


def test_cnpg_gives_every_store_client_the_clusters_uri(tmp_path: Path) -> None:
    objects = render_with_cnpg(tmp_path)
    (cluster,) = of_kind(objects, "Cluster")
    clients = [
        o for o in objects if component(o) in ("api", "bot", "web", "migrate") and o["kind"] in ("Deployment", "Job")
    ]
    assert len(clients) == 4
    readers = [c for client in clients for c in containers(client) if "DATABASE_URL" in env_of(c)]
    assert len(readers) == 7  # three services, each with its schema wait, and the migration Job
    for container in readers:
        url = env_of(container)["DATABASE_URL"]["valueFrom"]["secretKeyRef"]
        assert url == {"name": f"{cluster['metadata']['name']}-app", "key": "uri"}, container["name"]


# --- the node-preparation script ---------------------------------------------------------------------------------


@functools.cache
def node_prep() -> ModuleType:
    spec = importlib.util.spec_from_file_location("node_prep", K8S / "node-prep" / "node_prep.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_node_prep_reads_whether_profiling_is_open_to_all() -> None:
    prep = node_prep()
    assert prep.profiling_allowed("Mobile: 4294967295\nRmProfilingAdminOnly: 0\nEnableMSI: 1\n") is True
    assert prep.profiling_allowed("RmProfilingAdminOnly: 1\n") is False
    with pytest.raises(prep.NodePrepError, match="RmProfilingAdminOnly"):
        prep.profiling_allowed("EnableMSI: 1\n")


def test_node_prep_labels_a_node_with_its_models_board_key_and_refuses_a_mixed_one() -> None:
    prep = node_prep()
    assert prep.board_key(["NVIDIA H100 80GB HBM3"] * 8) == "h100"
    assert prep.board_key(["NVIDIA H100 PCIe"]) == "h100-pcie"  # another model, another pool
    with pytest.raises(prep.NodePrepError, match="several GPU models"):
        prep.board_key(["NVIDIA H100 80GB HBM3", "NVIDIA H200"])
    with pytest.raises(prep.NodePrepError, match="no GPU"):
        prep.board_key([])
    assert prep.lock_clock_mhz("max", [1980, 1965]) == 1965
    assert prep.lock_clock_mhz("1755", [1980]) == 1755
    with pytest.raises(prep.NodePrepError, match="SM_CLOCK"):
        prep.lock_clock_mhz("boost", [1980])
