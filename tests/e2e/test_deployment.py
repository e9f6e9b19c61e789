"""docker/: the compose files, the Dockerfile and the nginx template agree with each other and with
the repository. There is no Docker engine here, so nothing is built or run by Docker: the files
are parsed and cross-checked, nginx itself validates the configuration (`nginx -t`), and the Redis
Cluster variant's config and init command form a real three-master cluster on loopback.

Both compose files get the same cross-checks: docker-compose.yml (one Redis) and
docker-compose.cluster.yml (three Redis Cluster masters and a one-shot init service)."""

import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from urllib.parse import urlsplit

import pytest
import yaml

from roomcast_e2e import _die_with_parent, free_port, redis_cli, stop_process, tail
from test_load_balancer import REPOSITORY, TEMPLATE, render_template

DOCKER = os.path.join(REPOSITORY, "docker")
STANDALONE = "docker-compose.yml"
CLUSTER = "docker-compose.cluster.yml"
TLS_OVERRIDE = "docker-compose.tls.yml"
TLS_TEMPLATE = os.path.join(DOCKER, "nginx", "roomcast-tls.conf.template")
ENV_EXAMPLE = os.path.join(DOCKER, "roomcast.env.example")
CLUSTER_SCHEME = "redis-cluster://"
# The secrets the compose files take from docker/.env (compose's `${NAME:?message}`).
SECRET = re.compile(r"\$\{(ROOMCAST_[A-Z_]+):\?[^}]*\}")
# A template name that a script the compose files mount into the nginx image's
# /docker-entrypoint.d sets (the entrypoint sources *.envsh before it renders the templates).
RESOLVER_SCRIPT = os.path.join(DOCKER, "nginx", "roomcast-resolver.envsh")
SCRIPT_SETS = {"ROOMCAST_NGINX_RESOLVER": RESOLVER_SCRIPT}


def interpolate(text, values):
    """Compose's `${NAME:?message}` filled in from `values` (the secrets of docker/.env)."""
    return SECRET.sub(lambda match: values[match.group(1)], text)


def load_compose(name):
    with open(os.path.join(DOCKER, name), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


@pytest.fixture(scope="module", params=[STANDALONE, CLUSTER], ids=["standalone", "cluster"])
def compose(request):
    return load_compose(request.param)


@pytest.fixture(scope="module")
def cluster_compose():
    return load_compose(CLUSTER)


def environment(service):
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return env


def node_services(compose):
    return {name: service for name, service in compose["services"].items()
            if "ROOMCAST_REDIS_URL" in environment(service)}


def redis_endpoints(url):
    """(host, port) of every Redis a ROOMCAST_REDIS_URL names: the server of `redis://`, every
    seed of `redis-cluster://host:port,host:port`."""
    # The user and password (which holds compose's `${NAME:?message}`) go first.
    scheme, _, rest = url.partition("://")
    hosts = rest.rpartition("@")[2]
    if scheme + "://" == CLUSTER_SCHEME:
        seeds = [urlsplit("redis://" + seed) for seed in hosts.split("/", 1)[0].split(",")]
    else:
        assert scheme == "redis", f"{url}: neither redis:// nor redis-cluster://"
        seeds = [urlsplit("redis://" + hosts)]
    return [(seed.hostname, seed.port or 6379) for seed in seeds]


def redis_services(compose):
    """The services the nodes' ROOMCAST_REDIS_URLs name, by name."""
    hosts = {host for service in node_services(compose).values()
             for host, _ in redis_endpoints(environment(service)["ROOMCAST_REDIS_URL"])}
    return {host: compose["services"][host] for host in sorted(hosts) if host in compose["services"]}


def depends_on(service):
    """depends_on as {service: condition}; the short list form means service_started."""
    depends = service.get("depends_on", {})
    if isinstance(depends, list):
        return {name: "service_started" for name in depends}
    return {name: (options or {}).get("condition", "service_started") for name, options in depends.items()}


def mounts(service):
    """[source, target, options...] of each short-form volume; a `${NAME:-default}` source stays whole."""
    return [re.split(r":(?![^{]*\})", volume) for volume in service.get("volumes", []) if isinstance(volume, str)]


def redis_config(service):
    """The repository path of the config file a Redis service mounts and starts with."""
    config_target = service["command"][1]
    source = next((source for source, target, *_ in mounts(service) if target == config_target), None)
    assert source, f"{config_target} (the command's config file) is not mounted"
    return os.path.normpath(os.path.join(DOCKER, source))


def parse_redis_config(text):
    """{directive: arguments}, the last occurrence winning, as redis-server reads a config file."""
    settings = {}
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        if words:
            settings[words[0].lower()] = " ".join(words[1:])
    return settings


def command_directives(service):
    """`--name value...` of a redis-server command line, in order, as (name, [values])."""
    directives = []
    for argument in service["command"][2:]:
        if argument.startswith("--"):
            directives.append((argument[2:].lower(), []))
        elif directives:
            directives[-1][1].append(argument)
    return directives


def redis_settings(service):
    """What the Redis of a service runs with: its config file, then `--name value` on the command
    line (which redis-server applies after the file). ACL users are `acl_users`."""
    with open(redis_config(service), encoding="utf-8") as handle:
        settings = parse_redis_config(handle.read())
    for name, values in command_directives(service):
        if name != "user":
            settings[name] = " ".join(values)
    return settings


def acl_users(service):
    """{user: [ACL rules]} of the `--user` directives of a Redis service's command."""
    return {values[0]: values[1:] for name, values in command_directives(service) if name == "user"}


def acl_arguments(service, password):
    """The `--user ...` arguments of a Redis service's command, with the password filled in."""
    arguments = []
    for name, values in command_directives(service):
        if name == "user":
            arguments += ["--user", *[interpolate(value, {"ROOMCAST_REDIS_PASSWORD": password}) for value in values]]
    return arguments


def test_compose_has_redis_two_nodes_and_nginx(compose):
    services = compose["services"]
    assert "nginx" in services
    assert len(node_services(compose)) >= 2
    for name, service in node_services(compose).items():
        for redis_host, _ in redis_endpoints(environment(service)["ROOMCAST_REDIS_URL"]):
            assert redis_host in services, f"{name} points at Redis host {redis_host!r}, which is no service"
            assert redis_host in depends_on(service), f"{name} does not wait for {redis_host}"
            assert depends_on(service)[redis_host] == "service_healthy", f"{name} does not wait until {redis_host} answers"
            assert "healthcheck" in services[redis_host], f"{redis_host} has no healthcheck to wait for"


def test_nodes_advertise_their_own_service_name_and_port(compose):
    for name, service in node_services(compose).items():
        advertised = urlsplit(environment(service)["ROOMCAST_NODE_ADVERTISE_URL"])
        assert advertised.hostname == name, f"{name} advertises {advertised.hostname}: other nodes could not forward to it"
        assert str(advertised.port) in [str(port) for port in service.get("expose", [])], f"{name} does not expose {advertised.port}"
        assert "8080" in [str(port) for port in service.get("expose", [])]


def test_redis_uses_the_repository_config_with_aof(compose):
    redis = redis_services(compose)
    assert redis, "the nodes name no Redis service"
    ports = {host: port for service in node_services(compose).values()
             for host, port in redis_endpoints(environment(service)["ROOMCAST_REDIS_URL"])}
    data_volumes = []
    for name, service in redis.items():
        config = redis_config(service)
        assert os.path.dirname(config) == os.path.join(REPOSITORY, "config"), f"{name}: {config} is not in config/"
        assert os.path.isfile(config), f"{name} mounts {config}, which the repository does not have"
        assert any(os.path.normpath(os.path.join(DOCKER, source)) == config and options == ["ro"]
                   for source, target, *options in mounts(service)), f"{name}: the config is not mounted read-only"
        with open(config, encoding="utf-8") as handle:
            assert re.search(r"^appendonly yes$", handle.read(), re.MULTILINE), f"{name}: AOF persistence is off"
        settings = redis_settings(service)
        assert settings.get("appendonly") == "yes", f"{name}: the command turns the AOF off"
        assert settings.get("port", "6379") == str(ports[name]), f"{name} listens on {settings.get('port')}, the nodes use {ports[name]}"
        # The nodes reach it from other containers, with a password: protected mode stays on (it
        # stands aside once the default user cannot log in without one).
        assert settings.get("bind") == "0.0.0.0", f"{name} binds {settings.get('bind')}"
        assert settings.get("protected-mode", "yes") == "yes", f"{name}: protected mode is off"
        # The AOF (and a cluster master's nodes.conf) lives in a named volume of its own.
        volume = next((source for source, target, *_ in mounts(service) if target == settings.get("dir")), None)
        assert volume in compose.get("volumes", {}), f"{name}: its data directory {settings.get('dir')} is no named volume"
        data_volumes.append(volume)
    assert len(set(data_volumes)) == len(data_volumes), f"Redis services share a data volume: {data_volumes}"


def test_redis_lets_in_only_the_acl_user_with_the_password_of_docker_env(compose):
    """The default user (no password) is off; the nodes log in as an ACL user whose password
    comes from docker/.env, the same variable in Redis's command and in the nodes' URL."""
    for name, service in redis_services(compose).items():
        users = acl_users(service)
        assert users.get("default", [None])[:2] == ["off", "resetpass"], f"{name}: the default user is not off without a password"
        assert "nopass" not in users["default"]
        (user, rules), = [(user, rules) for user, rules in users.items() if user != "default"]
        assert "on" in rules and any(SECRET.fullmatch(rule[1:]) and rule.startswith(">") for rule in rules), f"{name}: {rules}"
        assert "nopass" not in rules
        assert environment(service).get("REDISCLI_AUTH") == next(rule[1:] for rule in rules if rule.startswith(">"))
        assert "roomcast" in " ".join(service["healthcheck"]["test"]), f"{name}: the health check does not log in"
    for name, service in node_services(compose).items():
        url = environment(service)["ROOMCAST_REDIS_URL"]
        authority = url.split("://", 1)[1].rpartition("@")[0]
        assert authority.split(":", 1)[0] == user and SECRET.fullmatch(authority.split(":", 1)[1]), f"{name}: {url}"
    # Every secret the file needs is in the example environment file, empty.
    with open(ENV_EXAMPLE, encoding="utf-8") as handle:
        example = dict(line.split("=", 1) for line in handle.read().splitlines() if line and not line.startswith("#"))
    with open(os.path.join(DOCKER, STANDALONE if "redis" in compose["services"] else CLUSTER), encoding="utf-8") as handle:
        needed = set(SECRET.findall(handle.read()))
    assert needed == set(example), (needed, example)
    assert all(value == "" for value in example.values()), "the example holds a secret"


def sets_by_script(nginx, name):
    """Whether the nginx service mounts the script that sets `name` where the image's entrypoint
    sources it before rendering the templates."""
    script = SCRIPT_SETS.get(name)
    return script is not None and os.access(script, os.X_OK) and any(
        os.path.normpath(os.path.join(DOCKER, source)) == script and re.fullmatch(r"/docker-entrypoint\.d/1\d-[\w.-]+\.envsh", target)
        for source, target, *_ in mounts(nginx))


def resolver_of(resolv_conf, preset=None):
    """What the resolver script sets, given that /etc/resolv.conf text (and a value set before)."""
    with open(RESOLVER_SCRIPT, encoding="utf-8") as handle:
        script = handle.read()
    with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as conf:
        conf.write(resolv_conf)
    try:
        env = {"PATH": os.environ["PATH"], **({"ROOMCAST_NGINX_RESOLVER": preset} if preset else {})}
        result = subprocess.run(["sh", "-c", script.replace("/etc/resolv.conf", conf.name) + '\nprintf %s "$ROOMCAST_NGINX_RESOLVER"'],
                                env=env, capture_output=True, text=True, check=True)
        return result.stdout
    finally:
        os.unlink(conf.name)


def test_the_resolver_script_picks_the_runtime_dns():
    # podman: aardvark-dns first, then the host's nameservers, which know no service names.
    assert resolver_of("search dns.podman\nnameserver 10.89.0.1\nnameserver 10.255.255.53\n") == "10.89.0.1"
    assert resolver_of("nameserver 127.0.0.11\noptions ndots:0\n") == "127.0.0.11"
    assert resolver_of("nameserver fd00::1\nnameserver 10.0.0.1\n") == "[fd00::1]"
    assert resolver_of("nameserver 127.0.0.11\n", preset="10.0.0.53 valid=30s") == "10.0.0.53 valid=30s"


def template_names(path):
    with open(path, encoding="utf-8") as handle:
        return set(re.findall(r"\$\{([A-Z0-9_]+)\}", handle.read()))


def test_nginx_sends_to_a_name_every_node_answers_to(compose):
    nginx = compose["services"]["nginx"]
    env = environment(nginx)
    nodes = node_services(compose)
    host, port = env["ROOMCAST_NODES"].split(":")
    for name, service in nodes.items():
        aliases = service.get("networks", {}).get("default", {}).get("aliases", [])
        assert host in aliases, f"{name} is not reached as {host}"
        assert port in [str(p) for p in service.get("expose", [])], f"{name} does not expose {port}"
    # Every ${NAME} in the template is set for the nginx service or by a script it mounts into the
    # entrypoint's folder, and the envsubst filter lets it through.
    for name in template_names(TEMPLATE):
        assert name in env or sets_by_script(nginx, name), f"the template uses ${{{name}}}, which the nginx service does not set"
        assert re.search(env["NGINX_ENVSUBST_FILTER"], name), f"NGINX_ENVSUBST_FILTER leaves ${{{name}}} as it is"
    assert any(os.path.normpath(os.path.join(DOCKER, source)) == TEMPLATE
               and target.startswith("/etc/nginx/templates/") and target.endswith(".template")
               for source, target, *_ in mounts(nginx))
    published = [str(port).split(":")[-1] for port in nginx["ports"]]
    assert env["ROOMCAST_NGINX_PORT"] in published


def test_nginx_looks_the_nodes_up_again_and_keeps_no_connection_to_them():
    """A name in an upstream block is resolved once, at start: the templates have none, and
    proxy to a variable through a resolver with a short `valid`. nginx keeps no idle connection
    to servers found that way; the map says `close` for every request but an upgrade."""
    for path in (TEMPLATE, TLS_TEMPLATE):
        with open(path, encoding="utf-8") as handle:
            template = handle.read()
        assert not re.search(r"^\s*upstream\s", template, re.M), path
        assert re.search(r"^resolver \$\{ROOMCAST_NGINX_RESOLVER\} valid=\d+s ipv6=off;$", template, re.M), path
        assert re.search(r"^\s*set \$roomcast_nodes \$\{ROOMCAST_NODES\};$", template, re.M), path
        assert re.findall(r"proxy_pass\s+([^;]+);", template) == ["http://$roomcast_nodes"], path
        upgrade_map = re.search(r"map \$http_upgrade \$roomcast_connection_upgrade \{(.*?)\}", template, re.S).group(1)
        assert re.search(r"''\s+close;", upgrade_map) and re.search(r"default\s+upgrade;", upgrade_map), path


def location_blocks(path):
    with open(path, encoding="utf-8") as handle:
        template = handle.read()
    return template[template.index("    # For operators only"):template.rindex("}")]


def test_the_tls_template_proxies_as_the_plain_one():
    assert location_blocks(TLS_TEMPLATE) == location_blocks(TEMPLATE)


def test_the_tls_override_swaps_the_template_and_fills_it_in(compose):
    override = load_compose(TLS_OVERRIDE)
    assert set(override["services"]) == {"nginx"}
    nginx = override["services"]["nginx"]
    env = {**environment(compose["services"]["nginx"]), **environment(nginx)}
    base_target = next(target for source, target, *_ in mounts(compose["services"]["nginx"])
                       if os.path.normpath(os.path.join(DOCKER, source)) == TEMPLATE)
    # Mounted where the plain template was: compose keeps one mount per container path.
    assert any(os.path.normpath(os.path.join(DOCKER, source)) == TLS_TEMPLATE and target == base_target
               for source, target, *_ in mounts(nginx))
    for name in template_names(TLS_TEMPLATE):
        assert name in env or sets_by_script(compose["services"]["nginx"], name), f"the TLS template uses ${{{name}}}, which nothing sets"
        assert re.search(env["NGINX_ENVSUBST_FILTER"], name)
    certificate_folder = next(target for _, target, *_ in mounts(nginx) if target != base_target and not target.endswith(".envsh"))
    for name in ("ROOMCAST_TLS_CERTIFICATE", "ROOMCAST_TLS_CERTIFICATE_KEY"):
        assert os.path.dirname(env[name]) == certificate_folder, name
    published = [str(port).split(":")[-1] for port in nginx["ports"]]
    assert env["ROOMCAST_NGINX_TLS_PORT"] in published
    assert [str(port).split(":")[0] for port in nginx["ports"] if str(port).endswith(":" + env["ROOMCAST_NGINX_TLS_PORT"])] \
        == [env["ROOMCAST_NGINX_TLS_PUBLIC_PORT"]]


@pytest.mark.parametrize("tls", [False, True], ids=["http", "tls"])
def test_nginx_accepts_the_config_compose_renders(compose, tls):
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.access(binary, os.X_OK):
        pytest.fail("nginx is not installed: run scripts/setup-tests.sh (scripts/test.sh does)")
    env = dict(environment(compose["services"]["nginx"]))
    template = TEMPLATE
    directory = tempfile.mkdtemp(prefix="roomcast-nginx-t-")
    if tls:
        env.update(environment(load_compose(TLS_OVERRIDE)["services"]["nginx"]))
        template = TLS_TEMPLATE
        env["ROOMCAST_NGINX_TLS_PORT"] = "127.0.0.1:" + env["ROOMCAST_NGINX_TLS_PORT"]
        # nginx -t reads the certificate and its key: a throwaway self-signed pair.
        env["ROOMCAST_TLS_CERTIFICATE"] = os.path.join(directory, "tls.crt")
        env["ROOMCAST_TLS_CERTIFICATE_KEY"] = os.path.join(directory, "tls.key")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                        "-keyout", env["ROOMCAST_TLS_CERTIFICATE_KEY"], "-out", env["ROOMCAST_TLS_CERTIFICATE"]],
                       check=True, capture_output=True)
    # What the resolver script would find in the container's /etc/resolv.conf (Docker's DNS).
    env["ROOMCAST_NGINX_RESOLVER"] = "127.0.0.11"
    env["ROOMCAST_NGINX_PORT"] = "127.0.0.1:" + env["ROOMCAST_NGINX_PORT"]
    try:
        with open(os.path.join(directory, "site.conf"), "w", encoding="utf-8") as handle:
            handle.write(render_template(template, env))
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
    # build (Swift), runtime (what both ways share), prebuilt (a binary built outside, as
    # scripts/compose-test.sh does), and the default last stage: runtime + the build stage's binary.
    assert [s[1] for s in stages] == ["build", "runtime", "prebuilt", ""], stages
    assert stages[0][0].startswith("swift:") and stages[1][0].startswith("debian:"), stages
    assert stages[2][0] == "runtime" and stages[3][0] == "runtime", stages
    assert "libhiredis-dev" in dockerfile and "libhiredis0.14" in dockerfile
    for source in re.findall(r"^COPY\s+(?!--from)(\S+)\s+\S+", dockerfile, re.MULTILINE):
        if source.startswith("${PREBUILT}"):
            continue  # staged by whoever builds --target prebuilt (.build-prebuilt/, not in git)
        assert os.path.exists(os.path.join(REPOSITORY, source)), f"COPY {source}: no such path in the repository"
    # The resource bundles (Lua scripts) travel with the binary.
    assert ".resources" in dockerfile
    assert dockerfile.rstrip().endswith("COPY --from=build /staging/ /app/")


# ---------------------------------------------------------------------------------------------
# docker-compose.cluster.yml: three Redis Cluster masters, formed by a one-shot init service


def cluster_init(compose):
    """(name, service) of the one-shot service the nodes wait for: it must have completed."""
    names = {name for service in node_services(compose).values()
             for name, condition in depends_on(service).items() if condition == "service_completed_successfully"}
    assert len(names) == 1, f"the nodes should wait for one init service to complete, not {sorted(names)}"
    name = names.pop()
    return name, compose["services"][name]


def init_script_and_masters(service):
    """The init command is `sh -c <script> <$0> host:port...`: the script as the shell gets it
    (compose's `$$` is a literal `$`, and a lone `$` would be compose's to fill in) and the
    masters it is given."""
    command = service["command"]
    assert command[:2] == ["sh", "-c"] and len(command) > 4, command
    script = command[2]
    assert "$" not in script.replace("$$", ""), "a lone $ in the init script: compose would substitute it"
    return script.replace("$$", "$"), command[4:]


def test_cluster_has_three_masters_on_the_cluster_config(cluster_compose):
    masters = redis_services(cluster_compose)
    assert len(masters) == 3, f"three masters expected, the nodes name {sorted(masters)}"
    services = [name for name, service in cluster_compose["services"].items()
                if str(service.get("image", "")).startswith("redis:") and service.get("command", [""])[0] == "redis-server"]
    assert sorted(services) == sorted(masters), "a redis-server service the nodes do not name (or the reverse)"
    for name, service in masters.items():
        assert str(service["image"]).startswith("redis:7"), f"{name}: sharded pub/sub needs Redis 7"
        assert redis_config(service) == os.path.join(REPOSITORY, "config", "redis-cluster.conf"), name
        settings = redis_settings(service)
        assert settings.get("cluster-enabled") == "yes", f"{name} is not in cluster mode"
        assert settings.get("appendonly") == "yes", f"{name}: AOF persistence is off"
        assert settings.get("cluster-config-file"), f"{name}: no cluster-config-file"
    for name, service in node_services(cluster_compose).items():
        url = environment(service)["ROOMCAST_REDIS_URL"]
        assert url.startswith(CLUSTER_SCHEME), f"{name} does not use cluster mode: {url}"
        assert sorted(host for host, _ in redis_endpoints(url)) == sorted(masters), f"{name} does not list every master: {url}"


def test_cluster_config_keeps_what_the_standalone_config_sets():
    """config/redis-cluster.conf repeats config/redis.conf (durability, pub/sub buffers, ...) and
    adds the cluster directives."""
    with open(os.path.join(REPOSITORY, "config", "redis.conf"), encoding="utf-8") as handle:
        standalone = parse_redis_config(handle.read())
    with open(os.path.join(REPOSITORY, "config", "redis-cluster.conf"), encoding="utf-8") as handle:
        cluster = parse_redis_config(handle.read())
    for name, value in standalone.items():
        assert cluster.get(name) == value, f"redis-cluster.conf: {name} {cluster.get(name)!r}, redis.conf has {value!r}"
    assert cluster["cluster-enabled"] == "yes"
    assert int(cluster["cluster-node-timeout"]) > 0
    assert "cluster-announce-ip" not in cluster, "one announced address cannot fit three masters"


def test_redis_never_evicts_roomcast_data():
    """Redis holds the only copy: when full it must refuse writes, not drop keys."""
    for name in ("redis.conf", "redis-cluster.conf"):
        with open(os.path.join(REPOSITORY, "config", name), encoding="utf-8") as handle:
            settings = parse_redis_config(handle.read())
        assert settings.get("maxmemory-policy") == "noeviction", name
        assert settings.get("maxmemory", "0") not in ("0", ""), f"{name}: no maxmemory"


def test_cluster_init_names_every_master_and_gates_the_nodes(cluster_compose):
    masters = redis_services(cluster_compose)
    name, init = cluster_init(cluster_compose)
    script, arguments = init_script_and_masters(init)
    assert str(init["image"]).startswith("redis:7"), f"{name}: redis-cli --cluster needs the Redis 7 image"
    assert "cli --cluster create" in script and "cluster_state:ok" in script
    seeds = redis_endpoints(environment(next(iter(node_services(cluster_compose).values())))["ROOMCAST_REDIS_URL"])
    assert sorted(arguments) == sorted(f"{host}:{port}" for host, port in seeds), f"{name} is given {arguments}"
    assert sorted(argument.split(":")[0] for argument in arguments) == sorted(masters)
    for master in masters:
        assert depends_on(init).get(master) == "service_healthy", f"{name} does not wait for {master}"
    assert init.get("restart", "no") == "no", f"{name} runs once"
    for node, service in node_services(cluster_compose).items():
        assert depends_on(service).get(name) == "service_completed_successfully", f"{node} starts before the cluster is formed"


def test_cluster_compose_is_the_standalone_one_with_another_redis(cluster_compose):
    standalone = load_compose(STANDALONE)
    assert cluster_compose["services"]["nginx"] == standalone["services"]["nginx"]
    assert sorted(node_services(cluster_compose)) == sorted(node_services(standalone))
    for name, service in node_services(cluster_compose).items():
        other = standalone["services"][name]
        assert {key: value for key, value in service.items() if key not in ("environment", "depends_on")} \
            == {key: value for key, value in other.items() if key not in ("environment", "depends_on")}, name
        differing = {key for key in environment(service).keys() | environment(other).keys()
                     if environment(service).get(key) != environment(other).get(key)}
        assert differing == {"ROOMCAST_REDIS_URL"}, f"{name}: {sorted(differing)} differ"
    # Both files in docker/ would otherwise be one compose project ("docker") and replace each other's containers.
    assert cluster_compose.get("name") and cluster_compose.get("name") != standalone.get("name")


# The native check: config/redis-cluster.conf and the init service's own script on loopback.


# The password of the native checks' Redis servers, which run with the compose files' ACL.
PASSWORD = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"


def cli(port, *arguments, user="roomcast", password=PASSWORD):
    """redis-cli against a local server, logged in as `user` (None: as nobody)."""
    login = ["--user", user, "--pass", password, "--no-auth-warning"] if user else []
    return redis_cli("-h", "127.0.0.1", "-p", str(port), *login, *arguments, check=False, timeout=10).strip()


class ClusterMaster:
    """redis-server with config/redis-cluster.conf on loopback, overriding only what three servers
    on one machine cannot share (port, directory) or what the container's command overrides
    (bind), with the ACL of its service. Its directory is named `roomcast-test-redis.*` and is on its command
    line, so scripts/test.sh sweeps a stray."""

    def __init__(self, config, acl=()):
        """`acl`: the service command's `--user` arguments, its password filled in."""
        self.config = config
        self.acl = list(acl)
        self.directory = tempfile.mkdtemp(prefix="roomcast-test-redis.")
        self.log = os.path.join(self.directory, "redis.log")
        self.process = None
        self.port = None

    def start(self):
        """Starts (or restarts, keeping the directory: AOF and nodes.conf) on new free ports."""
        executable = os.environ.get("REDIS_SERVER") or shutil.which("redis-server") or "/usr/bin/redis-server"
        for _ in range(5):
            port = free_port(with_bus_port=True)  # CLUSTER MEET in the init script assumes the default bus port
            with open(self.log, "a", encoding="utf-8") as log:
                self.process = subprocess.Popen(
                    [
                        executable, self.config, *self.acl, "--port", str(port), "--bind", "127.0.0.1", "--dir", self.directory,
                        "--daemonize", "no", "--set-proc-title", "no",
                    ],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent,
                )
            deadline = time.monotonic() + 30
            while self.process.poll() is None and time.monotonic() < deadline:
                if cli(port, "PING") == "PONG":
                    self.port = port
                    return
                time.sleep(0.05)
            stop_process(self.process)  # a port may have been taken meanwhile: try others
        raise RuntimeError("redis-server with config/redis-cluster.conf did not start:\n" + tail(self.log))

    def stop(self):
        stop_process(self.process)

    def destroy(self):
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


def run_init(script, ports, password):
    result = subprocess.run(["sh", "-c", script, "redis-cluster-init", *[f"127.0.0.1:{port}" for port in ports]],
                            capture_output=True, text=True, timeout=90, env={**os.environ, "REDISCLI_AUTH": password})
    assert result.returncode == 0, f"the init script failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    return result.stdout


def assert_cluster_ok(masters, timeout=60.0):
    """Every master says cluster_state:ok, and each one knows the three masters at their current
    addresses, none failing."""
    addresses = {f"127.0.0.1:{master.port}" for master in masters}
    deadline = time.monotonic() + timeout
    while True:
        states = {master.port: cli(master.port, "CLUSTER", "INFO") for master in masters}
        views = {master.port: cli(master.port, "CLUSTER", "NODES") for master in masters}
        known = {port: {line.split()[1].split("@")[0] for line in view.splitlines()
                        if "master" in line.split()[2] and "fail" not in line.split()[2] and len(line.split()) > 8}
                 for port, view in views.items()}
        if all("cluster_state:ok" in state for state in states.values()) and all(view == addresses for view in known.values()):
            return
        if time.monotonic() > deadline:
            pytest.fail(f"the cluster is not ok within {timeout} s:\n" + "\n".join(
                f"{port}: {states[port].splitlines()[:1]}\n{views[port]}" for port in states))
        time.sleep(0.1)


def test_cluster_config_and_init_command_form_a_cluster(cluster_compose):
    masters = redis_services(cluster_compose)
    _, init = cluster_init(cluster_compose)
    script, arguments = init_script_and_masters(init)
    assert len(arguments) == len(masters) == 3
    configs = {redis_config(service) for service in masters.values()}
    assert len(configs) == 1
    config = configs.pop()
    acls = {tuple(acl_arguments(service, PASSWORD)) for service in masters.values()}
    assert len(acls) == 1
    acl = acls.pop()
    servers = [ClusterMaster(config, acl) for _ in arguments]
    try:
        for server in servers:
            server.start()
        output = run_init(script, [server.port for server in servers], PASSWORD)
        assert "[OK] All 16384 slots covered" in output, output
        assert_cluster_ok(servers)
        for server in servers:
            assert "cluster_enabled:1" in cli(server.port, "INFO", "cluster")
            assert cli(server.port, "CONFIG", "GET", "appendonly").splitlines() == ["appendonly", "yes"]
        # A room's keys share a hash tag; -c follows MOVED to the master of the slot.
        assert cli(servers[0].port, "-c", "SET", "{room:deploy-test}:name", "kept") == "OK"

        # Restarted with other addresses (in compose: other container IPs; here: other ports),
        # keeping AOF and nodes.conf: the same command finds the cluster formed and re-introduces
        # the masters instead of failing on `--cluster create`.
        old_ports = {server.port for server in servers}
        for server in servers:
            server.stop()
        for server in servers:
            server.start()
        assert not old_ports & {server.port for server in servers}
        output = run_init(script, [server.port for server in servers], PASSWORD)
        assert "already formed" in output, output
        assert_cluster_ok(servers)
        for server in servers:
            assert cli(server.port, "-c", "GET", "{room:deploy-test}:name") == "kept"
    finally:
        for server in servers:
            server.destroy()


def test_redis_refuses_all_but_its_user_and_a_password_rotates_without_downtime(compose):
    """The Redis command of the compose file on loopback: anonymous clients and wrong passwords
    are refused, protected mode stays on, and the rotation docs/operations/deployment.md gives
    (a second password, then the first one removed) keeps old and new logins working in turn."""
    name, service = next(iter(redis_services(compose).items()))
    server = ClusterMaster(redis_config(service), acl_arguments(service, PASSWORD))
    # The cluster config needs a cluster: test its ACL as a plain server (the same directives).
    server.config = os.path.join(REPOSITORY, "config", "redis.conf")
    try:
        server.start()
        assert cli(server.port, "PING", user=None).startswith("NOAUTH"), name
        assert cli(server.port, "AUTH", "roomcast", "not-it", user=None).startswith("WRONGPASS")
        assert cli(server.port, "AUTH", "default", "", user=None).startswith("WRONGPASS")
        assert cli(server.port, "CONFIG", "GET", "protected-mode").splitlines() == ["protected-mode", "yes"]
        assert "nopass" not in cli(server.port, "ACL", "GETUSER", "default")
        # The rotation: add the new password, move the nodes to it, remove the old one.
        new = "a" * 64
        assert cli(server.port, "ACL", "SETUSER", "roomcast", f">{new}") == "OK"
        assert cli(server.port, "PING") == "PONG" and cli(server.port, "PING", password=new) == "PONG"
        assert cli(server.port, "ACL", "SETUSER", "roomcast", f"<{PASSWORD}", password=new) == "OK"
        assert cli(server.port, "PING", password=new) == "PONG"
        assert cli(server.port, "AUTH", "roomcast", PASSWORD, user=None).startswith("WRONGPASS")
    finally:
        server.destroy()
