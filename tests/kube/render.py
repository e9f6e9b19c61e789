"""The pods a Kubernetes cluster would run from docs/operations/kubernetes/roomcast.yaml, written
for `podman kube play` (podman 4.3), and the Secret in the form podman reads. Run by
scripts/kube-test.sh:

    python tests/kube/render.py --manifest docs/operations/kubernetes/roomcast.yaml \
        --subnet 10.89.3.0/24 --out DIR --literal redis-url=redis://... --literal jwt-secret=...

What Kubernetes' controllers and kubelet would do and podman 4.3.1 does not, this does, and
nothing else: every pod is the Deployment's pod template as written (image, args, env and its
Secret references, probes, lifecycle, resources, securityContext, terminationGracePeriodSeconds,
labels), with three changes that it prints:

- one Pod document a replica (`spec.replicas` of them, named <deployment>-kube-test-<n>), each to
  be played at an address of its own (`--ip`). podman plays a Deployment's replicas itself, but
  from one spec, so it cannot give each pod its own address in the environment;
- `env` entries from `fieldRef: status.podIP` get that address as a value, and `$(NAME)` in later
  values is expanded, as the kubelet does (podman 4.3.1 refuses status.podIP: "fieldPath
  status.podIP is either not valid or not supported", and leaves `$(POD_IP)` as text);
- the container's `ports` are left out: podman 4.3.1 publishes every containerPort on the host's
  port of the same number (Kubernetes publishes none), so the second replica could not start
  ("bind: address already in use") and the host's port would be taken. The probes keep naming the
  port `http`; scripts/kube-test.sh's stand-in for the kubelet resolves it from the manifest.

The Secret: podman 4.3.1 reads a `secretKeyRef` from a podman secret holding a JSON object of
base64 values (`podman secret create`), not from a played `kind: Secret` (which it stores as YAML
and then cannot parse). The keys are the `--literal`s, as `kubectl create secret generic
--from-literal` in the manifest's header; a key the pods read and no `--literal` gives is an error.

Writes DIR/pod-<n>.yaml and DIR/secret-<name>.json; prints the changes, then shell assignments
(after a line `#plan`) that scripts/kube-test.sh evaluates: pods, ips, containers, secret, service
name, port and target port, grace period, memory limit in bytes (0: none), no_new_privs (1 when
allowPrivilegeEscalation is false).
"""
import argparse
import base64
import copy
import ipaddress
import json
import os
import re
import shlex
import sys

import yaml


def fail(message):
    sys.exit(f"render.py: {message}")


def expand(value, environment):
    """Kubernetes' $(NAME) expansion of an env value: names defined before it are replaced,
    $$ is a literal $, an unknown $(NAME) stays as it is."""
    def replace(match):
        if match.group(0) == "$$":
            return "$"
        return environment.get(match.group(1), match.group(0))
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)", replace, value)


def resolve_port(port, container):
    """A probe's or a Service's port: a number, or the name of one of the container's ports."""
    if isinstance(port, int):
        return port
    for p in container.get("ports", []):
        if p.get("name") == port:
            return p["containerPort"]
    fail(f"port {port!r} is not a port of container {container['name']}")


def quantity_bytes(quantity):
    """A Kubernetes memory quantity (`1Gi`, `512Mi`, `1G`, `1000`) in bytes."""
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
    match = re.fullmatch(r"(\d+)([KMGT]i|[kMGT])?", str(quantity))
    if not match:
        fail(f"memory quantity {quantity!r} is not rendered here (add its form)")
    return int(match.group(1)) * units.get(match.group(2), 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--subnet", required=True, help="the podman network's subnet: pods get its last addresses")
    parser.add_argument("--out", required=True)
    parser.add_argument("--literal", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()

    with open(args.manifest, encoding="utf-8") as handle:
        documents = [d for d in yaml.safe_load_all(handle) if d]
    by_kind = {}
    for d in documents:
        by_kind.setdefault(d["kind"], []).append(d)
    unknown = set(by_kind) - {"Deployment", "Service", "PodDisruptionBudget"}
    if unknown or len(by_kind.get("Deployment", [])) != 1 or len(by_kind.get("Service", [])) != 1:
        fail(f"expected one Deployment, one Service and a PodDisruptionBudget, found {sorted(by_kind)}: "
             "teach this script (and scripts/kube-test.sh) the new kinds")
    deployment, service = by_kind["Deployment"][0], by_kind["Service"][0]
    template = deployment["spec"]["template"]
    labels = template["metadata"]["labels"]
    if deployment["spec"]["selector"]["matchLabels"].items() - labels.items():
        fail("the Deployment's selector does not select its own pods")
    if service["spec"]["selector"].items() - labels.items():
        fail(f"the Service selects {service['spec']['selector']}, the pods carry {labels}")
    containers = template["spec"]["containers"]
    if len(containers) != 1:
        fail("one container a pod expected")
    container = containers[0]
    service_port = service["spec"]["ports"][0]
    target_port = resolve_port(service_port.get("targetPort", service_port["port"]), container)

    literals = dict(item.split("=", 1) for item in args.literal)
    secrets = {}
    for env in container.get("env", []):
        ref = env.get("valueFrom", {}).get("secretKeyRef")
        if ref:
            secrets.setdefault(ref["name"], set()).add(ref["key"])
    if len(secrets) != 1:
        fail(f"the pods read the Secrets {sorted(secrets)}; this script makes one")
    (secret_name, keys), = secrets.items()
    if keys - literals.keys():
        fail(f"the pods read {sorted(keys - literals.keys())} from Secret {secret_name}, which no --literal gives")
    os.makedirs(args.out, exist_ok=True)
    secret_file = os.path.join(args.out, f"secret-{secret_name}.json")
    with open(os.open(secret_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as handle:
        json.dump({k: base64.b64encode(v.encode()).decode() for k, v in literals.items()}, handle)

    replicas = deployment["spec"].get("replicas", 1)
    hosts = list(ipaddress.ip_network(args.subnet).hosts())
    name = deployment["metadata"]["name"]
    pods, ips = [], []
    print(f"{args.manifest}: Deployment {name} -> {replicas} Pod(s) from its template; changes:")
    for n in range(replicas):
        ip = str(hosts[-2 - n])
        pod_name = f"{name}-kube-test-{n}"
        spec = copy.deepcopy(template["spec"])
        c = spec["containers"][0]
        c.pop("ports", None)
        environment = {}
        for env in c.get("env", []):
            field = env.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
            if field == "status.podIP":
                del env["valueFrom"]
                env["value"] = ip
                if n == 0:
                    print(f"  env {env['name']}: fieldRef status.podIP -> the pod's address ({ip}, ...)")
            elif field:
                fail(f"env {env['name']}: fieldRef {field} is not rendered here (add it)")
            if "value" in env:
                expanded = expand(env["value"], environment)
                if expanded != env["value"] and n == 0:
                    print(f"  env {env['name']}: {env['value']!r} expanded -> {expanded!r}, ...")
                env["value"] = expanded
                environment[env["name"]] = expanded
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {**copy.deepcopy(template["metadata"]), "name": pod_name}, "spec": spec}
        with open(os.path.join(args.out, f"pod-{n}.yaml"), "w", encoding="utf-8") as handle:
            yaml.safe_dump(pod, handle, sort_keys=False)
        pods.append(pod_name)
        ips.append(ip)
    if container.get("ports"):
        print(f"  ports {[p.get('name') or p['containerPort'] for p in container['ports']]} left out "
              "(podman would publish them on the host)")
    print(f"  Service {service['metadata']['name']} ({service_port['port']} -> {target_port}): "
          "played by the test (nginx, an upstream of the pods' addresses as its endpoints)")
    print("  PodDisruptionBudget: not modelled (one pod is stopped at a time by the test itself)")
    print(f"  Secret {secret_name}: podman secret with keys {sorted(literals)}")

    plan = {
        "pods": pods, "ips": ips, "containers": [f"{p}-{container['name']}" for p in pods],
        "secret_name": secret_name, "secret_file": secret_file,
        "service_name": service["metadata"]["name"], "service_port": service_port["port"],
        "target_port": target_port,
        "grace": template["spec"].get("terminationGracePeriodSeconds", 30),
        "memory_limit": quantity_bytes(container.get("resources", {}).get("limits", {}).get("memory", 0)),
        "no_new_privs": int(container.get("securityContext", {}).get("allowPrivilegeEscalation") is False),
    }
    print("#plan")
    for key, value in plan.items():
        if isinstance(value, list):
            print(f"{key}=({' '.join(shlex.quote(str(v)) for v in value)})")
        else:
            print(f"{key}={shlex.quote(str(value))}")


if __name__ == "__main__":
    main()
