"""docker/: the compose file, the Dockerfile and the nginx template agree with each other and with
the repository. There is no Docker engine here, so nothing is built or run by Docker: the files
are parsed and cross-checked, and nginx itself validates the configuration (`nginx -t`)."""

import os
import re
import shutil
import subprocess
import tempfile
from urllib.parse import urlsplit

import pytest
import yaml

from test_load_balancer import REPOSITORY, TEMPLATE, render_template

DOCKER = os.path.join(REPOSITORY, "docker")


@pytest.fixture(scope="module")
def compose():
    with open(os.path.join(DOCKER, "docker-compose.yml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def environment(service):
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return env


def node_services(compose):
    return {name: service for name, service in compose["services"].items()
            if "ROOMCAST_REDIS_URL" in environment(service)}


def test_compose_has_redis_two_nodes_and_nginx(compose):
    services = compose["services"]
    assert {"redis", "nginx"} <= set(services)
    assert len(node_services(compose)) >= 2
    for name, service in node_services(compose).items():
        redis_host = urlsplit(environment(service)["ROOMCAST_REDIS_URL"]).hostname
        assert redis_host in services, f"{name} points at Redis host {redis_host!r}, which is no service"
        depends = service.get("depends_on", {})
        assert redis_host in depends, f"{name} does not wait for {redis_host}"


def test_nodes_advertise_their_own_service_name_and_port(compose):
    for name, service in node_services(compose).items():
        advertised = urlsplit(environment(service)["ROOMCAST_NODE_ADVERTISE_URL"])
        assert advertised.hostname == name, f"{name} advertises {advertised.hostname}: other nodes could not forward to it"
        assert str(advertised.port) in [str(port) for port in service.get("expose", [])], f"{name} does not expose {advertised.port}"
        assert "8080" in [str(port) for port in service.get("expose", [])]


def test_redis_uses_the_repository_config_with_aof(compose):
    redis = compose["services"]["redis"]
    mounts = [volume.split(":") for volume in redis["volumes"] if isinstance(volume, str)]
    config = next((source for source, target, *_ in mounts if target.endswith("redis.conf")), None)
    assert config, "redis.conf is not mounted"
    path = os.path.normpath(os.path.join(DOCKER, config))
    with open(path, encoding="utf-8") as handle:
        assert re.search(r"^appendonly yes$", handle.read(), re.MULTILINE), "AOF persistence is off"
    assert any(target.endswith("redis.conf") for source, target, *_ in mounts if source == config)
    assert redis["command"][1] == next(target for source, target, *_ in mounts if source == config)


def test_nginx_upstreams_are_the_node_services(compose):
    nginx = compose["services"]["nginx"]
    env = environment(nginx)
    nodes = node_services(compose)
    upstreams = [env[name] for name in sorted(env) if name.startswith("ROOMCAST_NODE_")]
    assert len(upstreams) == len(nodes)
    with open(TEMPLATE, encoding="utf-8") as handle:
        template = handle.read()
    # Every ${NAME} in the template is set for the nginx service.
    for name in re.findall(r"\$\{([A-Z0-9_]+)\}", template):
        assert name in env, f"the template uses ${{{name}}}, which the nginx service does not set"
    for upstream in upstreams:
        host, port = upstream.split(":")
        assert host in nodes, f"nginx sends to {host}, which is not a node service"
        assert port in [str(p) for p in nodes[host].get("expose", [])]
    mounts = [volume.split(":") for volume in nginx["volumes"]]
    assert any(os.path.normpath(os.path.join(DOCKER, source)) == TEMPLATE
               and target.startswith("/etc/nginx/templates/") and target.endswith(".template")
               for source, target, *_ in mounts)
    published = [str(port).split(":")[-1] for port in nginx["ports"]]
    assert env["ROOMCAST_NGINX_PORT"] in published


def test_nginx_accepts_the_config_compose_renders(compose):
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.access(binary, os.X_OK):
        pytest.fail("nginx is not installed: run scripts/setup-tests.sh (scripts/test.sh does)")
    env = dict(environment(compose["services"]["nginx"]))
    # Service names resolve only inside compose's network: loopback stands in for them here.
    for name in env:
        if name.startswith("ROOMCAST_NODE_"):
            env[name] = "127.0.0.1:" + env[name].split(":")[1]
    env["ROOMCAST_NGINX_PORT"] = "127.0.0.1:" + env["ROOMCAST_NGINX_PORT"]
    directory = tempfile.mkdtemp(prefix="roomcast-nginx-t-")
    try:
        with open(os.path.join(directory, "site.conf"), "w", encoding="utf-8") as handle:
            handle.write(render_template(TEMPLATE, env))
        with open(os.path.join(directory, "nginx.conf"), "w", encoding="utf-8") as handle:
            handle.write(f"pid {directory}/nginx.pid; error_log {directory}/error.log;\n"
                         f"events {{}}\nhttp {{ access_log off; include {directory}/site.conf; }}\n")
        result = subprocess.run([binary, "-t", "-p", directory, "-c", os.path.join(directory, "nginx.conf")],
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def test_dockerfile_copies_what_the_repository_has():
    with open(os.path.join(DOCKER, "Dockerfile"), encoding="utf-8") as handle:
        dockerfile = handle.read()
    stages = re.findall(r"^FROM\s+(\S+)(?:\s+AS\s+(\S+))?", dockerfile, re.MULTILINE)
    assert len(stages) == 2 and stages[0][0].startswith("swift:"), stages
    assert "libhiredis-dev" in dockerfile and "libhiredis0.14" in dockerfile
    for source in re.findall(r"^COPY\s+(?!--from)(\S+)\s+\S+", dockerfile, re.MULTILINE):
        assert os.path.exists(os.path.join(REPOSITORY, source)), f"COPY {source}: no such path in the repository"
    # The resource bundles (Lua scripts) travel with the binary.
    assert ".resources" in dockerfile
