"""Helpers for the end-to-end suite: real processes, REST calls, Socket.IO clients, JWTs.

Everything here talks to processes started by conftest.py over loopback only. Every wait is
bounded: no helper blocks longer than its timeout argument.
"""

import atexit
import base64
import functools
import ctypes
import hashlib
import hmac
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field

import requests
import socketio

# 40 characters: the HS256 key every gateway node under test shares.
JWT_SECRET = "roomcast-e2e-test-secret-0123456789abcde"
assert len(JWT_SECRET) == 40

# Default bound for one socket wait or ack, in seconds: generous, as a loaded 2-core CI machine
# can take seconds for what takes milliseconds here; a wait that succeeds returns at once.
WAIT = 30.0

READY_LINE = re.compile(r"^roomcast ready on http://(\[[^\]]+\]|[^:/\s]+):(\d+)", re.MULTILINE)
ISO_MS_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")

_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    """Runs in the child before exec: SIGTERM it if the test process dies without cleaning up."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


def free_port(with_bus_port=False):
    """A free loopback port; with `with_bus_port`, one whose Redis Cluster bus port (+10000) is
    free and in range too."""
    for _ in range(100):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        if not with_bus_port:
            return port
        if port + 10000 <= 65535:
            try:
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
                    probe.bind(("127.0.0.1", port + 10000))
                return port
            except OSError:
                pass
    raise RuntimeError("no free port P with P + 10000 free on loopback")


def stop_process(process, grace=5.0):
    """SIGTERM, then SIGKILL after `grace` seconds; waits for the exit either way."""
    if process is None or process.poll() is not None:
        return
    try:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=grace)
    except ProcessLookupError:
        pass


def tail(path, lines=40):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return "".join(handle.readlines()[-lines:])
    except OSError as error:
        return f"(no log: {error})"


# ---------------------------------------------------------------------------------------------
# Processes


class RedisServer:
    """A private redis-server on a free loopback port, in a `roomcast-test-redis.*` directory
    (scripts/test.sh sweeps strays by that name)."""

    def __init__(self, arguments=()):
        self.directory = tempfile.mkdtemp(prefix="roomcast-test-redis.")
        self.process = None
        self.port = None
        executable = os.environ.get("REDIS_SERVER") or shutil.which("redis-server") or "/usr/bin/redis-server"
        last_error = None
        for _ in range(5):
            port = free_port(with_bus_port="--cluster-enabled" in arguments)
            self.command = [
                executable, "--port", str(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--set-proc-title", "no",
                "--dir", self.directory, "--daemonize", "no", "--protected-mode", "no",
                "--logfile", os.path.join(self.directory, "redis.log"), "--loglevel", "warning",
                *arguments,
            ]
            self.process = subprocess.Popen(
                self.command,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                preexec_fn=_die_with_parent,
            )
            if self._wait_until_ready(port, timeout=30.0):
                self.port = port
                return
            last_error = f"redis-server did not answer PING on port {port}:\n" + tail(os.path.join(self.directory, "redis.log"))
            stop_process(self.process)  # the port may have been taken meanwhile: try another
        self.destroy()
        raise RuntimeError(last_error)

    @property
    def url(self):
        return f"redis://127.0.0.1:{self.port}"

    def kill(self):
        """SIGKILL, as a crash: no shutdown, no final flush."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def start_again(self, extra_arguments=()):
        """Starts the server again on its port and directory (its AOF, if on, is read back), with
        `extra_arguments` added for this run."""
        self.process = subprocess.Popen([*self.command, *extra_arguments], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, preexec_fn=_die_with_parent)
        if not self._wait_until_ready(self.port, timeout=30.0):
            raise RuntimeError("redis-server did not come back:\n" + tail(os.path.join(self.directory, "redis.log")))

    def _wait_until_ready(self, port, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5) as connection:
                    connection.sendall(b"PING\r\n")
                    if connection.recv(64).startswith(b"+PONG"):
                        return True
            except OSError:
                pass
            time.sleep(0.05)
        return False

    def destroy(self):
        stop_process(self.process)
        shutil.rmtree(self.directory, ignore_errors=True)


class RedisCluster:
    """A private 3-master Redis Cluster on loopback: three `redis-server --cluster-enabled yes`
    joined by `redis-cli --cluster create`. It stands in for a `RedisServer` (`url`, `port`,
    `directory`) when the suite runs with `ROOMCAST_TEST_REDIS=cluster`."""

    def __init__(self, masters=3, replicas_per_master=0, arguments=()):
        """`replicas_per_master`: replicas of each master (`--cluster-replicas`), in `replicas`;
        `arguments`: extra `redis-server` options for every server."""
        self.servers = []
        self.replicas = []
        try:
            started = []
            for _ in range(masters * (1 + replicas_per_master)):
                started.append(RedisServer(arguments=(
                    "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000",
                    *arguments)))
                self.servers.append(started[-1])  # destroyed with the cluster if creation fails
            addresses = [f"127.0.0.1:{server.port}" for server in started]
            replicas = ("--cluster-replicas", str(replicas_per_master)) if replicas_per_master else ()
            created = redis_cli("--cluster", "create", *addresses, *replicas, "--cluster-yes")
            if "[OK] All 16384 slots covered" not in created:
                raise RuntimeError(f"redis-cli --cluster create failed:\n{created}")
            if replicas_per_master:  # redis-cli picks the masters: ask each server what it is
                roles = {server.port: redis_cli("-p", str(server.port), "ROLE").split("\n", 1)[0].strip() for server in started}
                self.servers = [server for server in started if roles[server.port] == "master"]
                self.replicas = [server for server in started if roles[server.port] != "master"]
            deadline = time.monotonic() + 60
            while not (all("cluster_state:ok" in redis_cli("-p", str(server.port), "CLUSTER", "INFO") for server in started)
                       and all("master_link_status:up" in redis_cli("-p", str(server.port), "INFO", "replication")
                               for server in self.replicas)):
                if time.monotonic() > deadline:
                    raise RuntimeError("the Redis Cluster did not reach cluster_state:ok within 60 s")
                time.sleep(0.1)
        except BaseException:
            self.destroy()
            raise

    @property
    def url(self):
        return "redis-cluster://" + ",".join(f"127.0.0.1:{server.port}" for server in self.servers)

    @property
    def port(self):
        """A seed: `redis-cli -c -p <port>` reaches every key from it."""
        return self.servers[0].port

    @property
    def directory(self):
        return self.servers[0].directory

    def destroy(self):
        for server in self.servers + self.replicas:
            server.destroy()


def wait_until(condition, what, patience):
    """Returns once `condition()` holds; fails after `patience` seconds with `what` (a string, or
    a callable giving one then). Waits on the condition, not on a time: a met condition returns
    at once, and the bound only catches what never happens."""
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"not within {patience} s: {what() if callable(what) else what}")


def redis_cli(*arguments, check=True, timeout=60):
    """Runs redis-cli and returns what it printed; a non-zero exit fails unless `check` is off."""
    executable = os.environ.get("REDIS_CLI") or shutil.which("redis-cli") or "/usr/bin/redis-cli"
    result = subprocess.run([executable, *arguments], capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise RuntimeError(f"redis-cli {' '.join(arguments)} exited with {result.returncode}: {result.stdout}{result.stderr}")
    return result.stdout


def private_redis():
    """The Redis the suite runs on: a `RedisCluster` under `ROOMCAST_TEST_REDIS=cluster`, else
    a `RedisServer`."""
    return RedisCluster() if os.environ.get("ROOMCAST_TEST_REDIS") == "cluster" else RedisServer()


# Who the nodes run as when the suite runs as root: an operator runs the gateway as a user of
# its own with no capabilities (the image's `roomcast`), and a root-only test once hid that no
# Redis connection could be made that way (a socket option that needs CAP_NET_ADMIN).
UNPRIVILEGED_USER, UNPRIVILEGED_GROUP = "nobody", "nogroup"


def unprivileged(command):
    """`command` run as `UNPRIVILEGED_USER` with every capability dropped (util-linux's setpriv),
    killed if the suite dies (a change of user clears a parent-death signal set before it); as it
    is when the suite does not run as root."""
    if os.geteuid() != 0:
        return list(command)
    return ["setpriv", f"--reuid={UNPRIVILEGED_USER}", f"--regid={UNPRIVILEGED_GROUP}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--pdeathsig=TERM", *command]


def _open_to_others(path):
    """Whether a user of no group of ours can reach `path`: every folder above it searchable by
    others, and the path itself readable by others."""
    path = os.path.abspath(path)
    if not os.stat(path).st_mode & 0o004:
        return False
    folder = os.path.dirname(path)
    while True:
        if not os.stat(folder).st_mode & 0o001:
            return False
        parent = os.path.dirname(folder)
        if parent == folder:
            return True
        folder = parent


@functools.lru_cache(maxsize=None)
def unprivileged_install(binary, repository):
    """(binary, working folder) an unprivileged node can use: the built ones when others can reach
    them, else a copy of the binary, its resource bundles and `config/` in a folder of its own
    (a checkout under a private home); removed when the suite ends."""
    if os.geteuid() != 0 or (_open_to_others(binary) and _open_to_others(os.path.join(repository, "config", "roomcast.yaml"))):
        return binary, repository
    staged = tempfile.mkdtemp(prefix="roomcast-e2e-unprivileged.", dir="/tmp")
    os.chmod(staged, 0o755)
    atexit.register(shutil.rmtree, staged, ignore_errors=True)
    built = os.path.dirname(binary)
    shutil.copy2(binary, staged)
    for entry in os.listdir(built):
        if entry.endswith(".resources"):
            shutil.copytree(os.path.join(built, entry), os.path.join(staged, entry))
    shutil.copytree(os.path.join(repository, "config"), os.path.join(staged, "config"))
    for root, folders, files in os.walk(staged):
        for name in folders + files:
            os.chmod(os.path.join(root, name), os.stat(os.path.join(root, name)).st_mode | 0o005)
    return os.path.join(staged, os.path.basename(binary)), staged


def process_identity(pid):
    """(effective uid, effective capabilities) of a running process, from /proc."""
    fields = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            key, _, value = line.partition(":")
            fields[key] = value.split()
    return int(fields["Uid"][1]), int(fields["CapEff"][0], 16)


_SYS_PIDFD_GETFD = 438  # the same number on every architecture Linux has


def socket_options(pid, remote_ports):
    """(TCP_NODELAY, SO_DEBUG) as `getsockopt` reads them on each established connection that
    process `pid` holds to one of `remote_ports` on loopback: its descriptors are borrowed with
    pidfd_getfd. (SO_DEBUG is what `TCP_NODELAY` means when asked for at the socket level.)"""
    remote_ports = set(remote_ports)
    inodes = set()
    for table in ("tcp", "tcp6"):
        try:
            with open(f"/proc/{pid}/net/{table}", encoding="ascii") as handle:
                rows = handle.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            columns = row.split()
            remote, state, inode = columns[2], columns[3], columns[9]
            if state == "01" and int(remote.rsplit(":", 1)[1], 16) in remote_ports:
                inodes.add(inode)
    libc = ctypes.CDLL(None, use_errno=True)
    flags = []
    pidfd = os.pidfd_open(pid)
    try:
        for descriptor in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{descriptor}")
            except OSError:
                continue
            if not (target.startswith("socket:[") and target[8:-1] in inodes):
                continue
            borrowed = libc.syscall(_SYS_PIDFD_GETFD, pidfd, int(descriptor), 0)
            if borrowed < 0:
                raise OSError(ctypes.get_errno(), f"pidfd_getfd({pid}, {descriptor})")
            with socket.socket(fileno=borrowed) as connection:
                flags.append((connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY),
                              connection.getsockopt(socket.SOL_SOCKET, socket.SO_DEBUG)))
    finally:
        os.close(pidfd)
    return flags


class GatewayNode:
    """`roomcast serve --port 0` from the built binary; ready when it prints its ready line.
    `settings` are extra environment variables (`ROOMCAST_...`) for this node. Nodes run as an
    unprivileged user (`unprivileged`) unless `privileged` says otherwise."""

    def __init__(self, name, binary, redis_url, log_directory, ready_timeout=30.0, settings=None, privileged=False, port=0):
        """`port`: 0 for a free one; a node started again in place of a stopped one passes its port."""
        self.name = name
        self.log_path = os.path.join(log_directory, f"gateway-{name}.log")
        environment = {key: value for key, value in os.environ.items()
                       if not key.startswith("ROOMCAST_") or key == "ROOMCAST_LOG_LEVEL"}
        environment.update({
            "ROOMCAST_JWT_SECRET": JWT_SECRET,
            "ROOMCAST_AUTH_BCRYPT_COST": "4",
            # Every test user registers from 127.0.0.1: REST rate limits out of the way (they
            # have tests of their own, with their own settings).
            "ROOMCAST_RATE_LOGINS_PER_ADDRESS": "1000000",
            "ROOMCAST_RATE_LOGINS_PER_ACCOUNT": "1000000",
            "ROOMCAST_RATE_REST_MUTATIONS_PER_USER": "1000000",
        })
        # Node settings as environment variables (ROOMCAST_...), over the defaults above.
        environment.update(settings or {})
        repository = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        if not privileged:
            binary, repository = unprivileged_install(binary, repository)
        command = [binary, "serve", "--port", str(port), "--redis-url", redis_url]
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                command if privileged else unprivileged(command),
                cwd=repository, env=environment,
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent,
            )
        deadline = time.monotonic() + ready_timeout
        while True:
            match = READY_LINE.search(self.output)
            if match:
                self.host = match.group(1)
                self.port = int(match.group(2))
                break
            if self.process.poll() is not None:
                raise RuntimeError(f"roomcast node {name} exited with {self.process.returncode} before it was ready:\n{self.output}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"roomcast node {name} printed no ready line within {ready_timeout} s:\n{self.output}")
            time.sleep(0.05)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    @property
    def output(self):
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as handle:
                return handle.read()
        except OSError:
            return ""

    def is_running(self):
        return self.process.poll() is None

    def stop(self):
        stop_process(self.process)


# ---------------------------------------------------------------------------------------------
# REST


@dataclass
class Account:
    token: str
    user: dict
    password: str

    @property
    def id(self):
        return self.user["id"]

    @property
    def username(self):
        return self.user["username"]


class Api:
    """The REST API of one node."""

    def __init__(self, base_url):
        self.base_url = base_url

    def request(self, method, path, token=None, json_body=None, timeout=WAIT):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return requests.request(method, self.base_url + path, json=json_body, headers=headers, timeout=timeout)

    def register(self, prefix="u", password="correct-horse-battery"):
        username = f"{prefix}_{uuid.uuid4().hex[:12]}"
        response = self.request("POST", "/api/auth/register",
                                json_body={"username": username, "password": password, "displayName": username.upper()})
        assert response.status_code == 201, f"register {username}: {response.status_code} {response.text}"
        data = response.json()["data"]
        assert data["user"]["username"] == username, data
        assert isinstance(data["token"], str) and data["token"], data
        return Account(token=data["token"], user=data["user"], password=password)

    def create_room(self, creator, other=None, participants=None, name=None):
        """A room made by `creator` with `other` (`otherUserId`) or `participants` (`participantIds`)."""
        body = {}
        if other is not None:
            body["otherUserId"] = other.id
        if participants is not None:
            body["participantIds"] = [account.id for account in participants]
        if name is not None:
            body["name"] = name
        response = self.request("POST", "/api/rooms", token=creator.token, json_body=body)
        assert response.status_code == 201, f"create room: {response.status_code} {response.text}"
        room = response.json()["data"]
        assert isinstance(room["id"], str) and room["id"], room
        return room


# ---------------------------------------------------------------------------------------------
# Socket.IO


@dataclass
class ConnectRefusal:
    """What a refused connection produced: the client's exception and the CONNECT_ERROR payload."""
    exception: Exception
    payload: object


@dataclass
class SocketClient:
    """An unmodified `socketio.Client` that records every server event it receives."""

    name: str
    sio: socketio.Client = field(default_factory=lambda: socketio.Client(reconnection=False))

    def __post_init__(self):
        self._condition = threading.Condition()
        self._events = []  # (event, payload) in arrival order
        self._connect_errors = []
        self.sio.on("*", self._on_any)
        self.sio.on("connect_error", self._on_connect_error)

    def _on_any(self, event, *args):
        payload = args[0] if len(args) == 1 else list(args)
        with self._condition:
            self._events.append((event, payload))
            self._condition.notify_all()

    def _on_connect_error(self, *args):
        with self._condition:
            self._connect_errors.append(args[0] if len(args) == 1 else list(args))
            self._condition.notify_all()

    def connect(self, url, auth=None, headers=None, namespaces=("/",), transports=("websocket",)):
        """`transports=None` is the client's default: long-polling first, then the upgrade."""
        for namespace in namespaces:
            if namespace != "/":  # CONNECT_ERROR for a namespace goes to that namespace's handler
                self.sio.on("connect_error", self._on_connect_error, namespace=namespace)
        self.sio.connect(url, transports=list(transports) if transports else None, auth=auth, headers=headers or {},
                         namespaces=list(namespaces), wait_timeout=WAIT)
        return self

    def connect_refused(self, url, auth=None, headers=None, namespaces=("/",), transports=("websocket",)):
        """Connects expecting a refusal; returns the exception and the CONNECT_ERROR payload."""
        try:
            self.connect(url, auth=auth, headers=headers, namespaces=namespaces, transports=transports)
        except socketio.exceptions.ConnectionError as error:
            with self._condition:
                self._condition.wait_for(lambda: self._connect_errors, timeout=WAIT)
                payload = self._connect_errors[0] if self._connect_errors else None
            return ConnectRefusal(exception=error, payload=payload)
        raise AssertionError(f"{self.name}: the server accepted a connection it should have refused (sid {self.sio.sid})")

    def call(self, event, data=None, timeout=WAIT):
        """Emits with an ack and returns the ack payload."""
        return self.sio.call(event, data, timeout=timeout)

    def emit(self, event, data=None):
        self.sio.emit(event, data)

    def _matching(self, event, where):
        def matches(payload):
            try:
                return where(payload)
            except (KeyError, TypeError, IndexError):  # a payload of another shape does not match
                return False
        return [payload for name, payload in self._events if name == event and matches(payload)]

    def received(self, event, where=lambda payload: True):
        """Every `event` received so far whose payload satisfies `where`, in arrival order."""
        with self._condition:
            return self._matching(event, where)

    def wait_for(self, event, where=lambda payload: True, timeout=WAIT):
        """The first `event` whose payload satisfies `where`, waiting at most `timeout` seconds."""
        with self._condition:
            if self._condition.wait_for(lambda: self._matching(event, where), timeout=timeout):
                return self._matching(event, where)[0]
            seen = [name for name, _ in self._events]
        raise AssertionError(f"{self.name}: no matching {event!r} within {timeout} s; events received: {seen}")

    def assert_no(self, event, where=lambda payload: True, within=0.5):
        """Fails if a matching `event` arrives (or had arrived) within `within` seconds."""
        with self._condition:
            unexpected = self._condition.wait_for(lambda: self._matching(event, where), timeout=within)
        assert not unexpected, f"{self.name}: unexpected {event!r}: {unexpected}"

    def disconnect(self):
        try:
            self.sio.disconnect()
        except Exception:  # noqa: BLE001 — teardown must go on
            pass


def error_code(ack):
    """The `error.code` of an error ack, with a readable failure otherwise."""
    assert isinstance(ack, dict) and isinstance(ack.get("error"), dict), f"expected an error ack, got {ack!r}"
    error = ack["error"]
    assert isinstance(error.get("message"), str) and error["message"], f"error without a message: {ack!r}"
    return error["code"]


def ack_data(ack):
    """The `data` of a success ack, with a readable failure otherwise."""
    assert isinstance(ack, dict) and "data" in ack and "error" not in ack, f"expected a success ack, got {ack!r}"
    return ack["data"]


def offset_key(offset):
    """Orders offsets: Redis stream ids `<ms>-<seq>` (or plain integers)."""
    if isinstance(offset, int) and not isinstance(offset, bool):
        return (offset, 0)
    assert isinstance(offset, str) and re.fullmatch(r"\d+(-\d+)?", offset), f"not a stream offset: {offset!r}"
    milliseconds, _, sequence = offset.partition("-")
    return (int(milliseconds), int(sequence or 0))


# ---------------------------------------------------------------------------------------------
# JWTs by hand (HS256 with hmac), to forge the bad ones


def _b64url(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def jwt_claims(token):
    """The claims of a token, unverified."""
    return json.loads(_b64url_decode(token.split(".")[1]))


def jwt_sign(claims, secret=JWT_SECRET, header=None):
    header = header or {"alg": "HS256", "typ": "JWT"}
    signing_input = _b64url(json.dumps(header, separators=(",", ":")).encode()) + "." + \
        _b64url(json.dumps(claims, separators=(",", ":")).encode())
    signature = hmac.new(secret.encode(), signing_input.encode("ascii"), hashlib.sha256).digest()
    return signing_input + "." + _b64url(signature)


def jwt_unsigned(claims):
    """An `alg: none` token: header and claims, empty signature."""
    header = {"alg": "none", "typ": "JWT"}
    return _b64url(json.dumps(header).encode()) + "." + _b64url(json.dumps(claims).encode()) + "."


def jwt_with_claims_swapped(token, **changes):
    """The token's header and signature around changed claims: a tampered token."""
    header, _, signature = token.split(".")
    claims = jwt_claims(token)
    claims.update(changes)
    return header + "." + _b64url(json.dumps(claims, separators=(",", ":")).encode()) + "." + signature


def http(url, method="GET", body=None, headers=None, timeout=WAIT + 30):
    """A plain HTTP request (no session, no retries): (status, body text, headers)."""
    request = urllib.request.Request(url, method=method, data=body, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode(), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(), dict(error.headers)


def with_text(text):
    """Matches a `message:new` payload carrying `text`."""
    return lambda payload: isinstance(payload, dict) and isinstance(payload.get("message"), dict) \
        and payload["message"].get("text") == text


def fence(room_id, sender, *sockets):
    """A fence for "nothing was sent" checks, so that they do not depend on machine speed: `sender`
    sends a uniquely worded message into the room and this returns once each of `sockets` has it.
    Every event of a room goes through the room's stream and reaches a socket in stream order, so
    whatever the room published before the fence is in those sockets' logs by then."""
    text = f"fence {uuid.uuid4().hex[:8]}"
    assert ack_data(sender.call("message:send", {"roomId": room_id, "text": text}))["message"]["text"] == text
    for socket_client in sockets:
        socket_client.wait_for("message:new", with_text(text))
