"""How long each way of running a node lets it drain: the compose files' `stop_grace_period`, the
Kubernetes manifests' `terminationGracePeriodSeconds` (after their `preStop` hook) and the systemd
unit's `TimeoutStopSec` must outlast a drain, `shutdown.drain_timeout_ms` plus the watchdog's
margin (Gateway.shutdownMargin), both read from the repository. The manifests' other parts are
checked against what the node serves and needs."""

import configparser
import os
import re

import pytest
import yaml

from test_load_balancer import REPOSITORY

COMPOSE_FILES = ["docker-compose.yml", "docker-compose.cluster.yml"]
KUBERNETES = os.path.join(REPOSITORY, "docs", "operations", "kubernetes", "roomcast.yaml")
SYSTEMD = os.path.join(REPOSITORY, "docs", "operations", "systemd", "roomcast.service")


def read(*parts):
    with open(os.path.join(REPOSITORY, *parts), encoding="utf-8") as handle:
        return handle.read()


def drain_budget(environment=None):
    """Seconds from SIGTERM to the watchdog's end of the process: the drain timeout (the node's
    environment, else the default of config/roomcast.yaml, which the settings' declarations make)
    and the watchdog's margin."""
    sample = yaml.safe_load(read("config", "roomcast.yaml"))
    drain_ms = int((environment or {}).get("ROOMCAST_SHUTDOWN_DRAIN_TIMEOUT_MS", sample["shutdown"]["drain_timeout_ms"]))
    margin = re.search(r"static let shutdownMargin: Duration = \.seconds\((\d+)\)", read("Sources", "RoomcastServer", "Application", "Gateway.swift"))
    assert margin, "Gateway.shutdownMargin is no longer a whole number of seconds: read it here as it is written"
    return drain_ms / 1000 + int(margin.group(1))


def compose_seconds(value):
    """A compose duration (`50s`, `1m30s`, `1m`) in seconds."""
    parts = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", str(value))
    assert parts and any(parts.groups()), f"not a compose duration: {value!r}"
    hours, minutes, seconds = (int(part or 0) for part in parts.groups())
    return hours * 3600 + minutes * 60 + seconds


def test_the_budget_is_read_from_the_repository():
    assert drain_budget() == 45
    assert drain_budget({"ROOMCAST_SHUTDOWN_DRAIN_TIMEOUT_MS": "60000"}) == 75


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_compose_nodes_wait_for_the_drain(name):
    services = yaml.safe_load(read("docker", name))["services"]
    nodes = {key: service for key, service in services.items() if service.get("image", "").startswith("roomcast")}
    assert len(nodes) >= 2, nodes.keys()
    for key, service in nodes.items():
        assert "stop_grace_period" in service, f"{name}: {key} is killed 10 s after SIGTERM, in the middle of its drain"
        grace = compose_seconds(service["stop_grace_period"])
        budget = drain_budget(service.get("environment"))
        assert grace >= budget, f"{name}: {key} waits {grace} s, a drain may take {budget} s"


def kubernetes_documents():
    with open(KUBERNETES, encoding="utf-8") as handle:
        return {document["kind"]: document for document in yaml.safe_load_all(handle) if document}


def test_kubernetes_deployment_waits_for_the_drain_after_its_prestop_hook():
    pod = kubernetes_documents()["Deployment"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    environment = {variable["name"]: variable.get("value") for variable in container["env"]}
    pre_stop = container["lifecycle"]["preStop"]["exec"]["command"]
    assert pre_stop[0] == "sleep", pre_stop
    # Kubernetes counts the grace period from the hook's start: the hook, then the drain.
    assert pod["terminationGracePeriodSeconds"] >= int(pre_stop[1]) + drain_budget(environment)


def test_kubernetes_deployment_probes_and_settings():
    documents = kubernetes_documents()
    pod = documents["Deployment"]["spec"]["template"]
    container = pod["spec"]["containers"][0]
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    environment = {variable["name"]: variable for variable in container["env"]}
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert environment["ROOMCAST_HOST"]["value"] == "0.0.0.0"
    assert int(environment["ROOMCAST_PORT"]["value"]) == ports["http"]
    # Redis and the secret from outside the manifests, never written in them.
    for name in ("ROOMCAST_REDIS_URL", "ROOMCAST_JWT_SECRET"):
        assert "secretKeyRef" in environment[name]["valueFrom"], name
    # Other nodes forward to the pod's own address, over plain HTTP (an https URL stops start-up).
    assert environment["ROOMCAST_NODE_ADVERTISE_URL"]["value"] == f"http://$(POD_IP):{ports['http']}"
    assert environment["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    labels = pod["metadata"]["labels"]
    for kind in ("PodDisruptionBudget", "Service"):
        spec = documents[kind]["spec"]
        selector = spec["selector"].get("matchLabels", spec["selector"])
        assert selector.items() <= labels.items(), f"the {kind} selects {selector}, the pods are {labels}"
    assert documents["PodDisruptionBudget"]["spec"]["maxUnavailable"] == 1
    assert documents["Service"]["spec"]["ports"][0]["targetPort"] in ("http", ports["http"])


def test_systemd_unit_waits_for_the_drain():
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str
    unit.read(SYSTEMD, encoding="utf-8")
    service = unit["Service"]
    assert service["KillSignal"] == "SIGTERM"
    assert int(service["TimeoutStopSec"]) >= drain_budget()
    assert service["ExecStart"].split()[1] == "serve"
