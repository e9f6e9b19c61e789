"""Runs schemathesis against one live gateway node with the node's own OpenAPI document.

Starts a private redis-server on a free loopback port (tests/e2e's RedisServer), one
`roomcast serve --port 0` on it, registers a user and gives it data (`seed_data`), then runs
`schemathesis run` on `http://127.0.0.1:PORT/api/openapi.json` with its default checks and that
user's token, every operation the document lists, bounded by a number of cases per operation.
Each run draws a new seed and prints it first: a failure is replayed with that seed
(SCHEMATHESIS_SEED=N). Afterwards the node must be alive and answer /readyz 200. Exit status:
schemathesis's when it failed, 1 when the node did not survive, else 0. Everything started is
stopped, whatever happens.

    .venv/bin/python tests/schemathesis/run_schemathesis.py [extra schemathesis arguments]

ROOMCAST_BINARY picks the binary (default: `swift build --show-bin-path`/roomcast);
SCHEMATHESIS_SEED replays a run; SCHEMATHESIS_MAX_EXAMPLES (cases per operation and phase)
changes the bounds; SCHEMATHESIS_TIMEOUT (seconds) ends a run that takes longer, as a failure.
"""

import os
import random
import re
import subprocess
import sys
import tempfile
import time
import uuid

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPOSITORY, "tests", "e2e"))

from roomcast_e2e import RedisServer, stop_process, tail  # noqa: E402

READY_LINE = re.compile(r"^roomcast ready on http://[^\s]+:(\d+)", re.MULTILINE)
JWT_SECRET = "roomcast-schemathesis-secret-0123456789ab"
SERVICE_KEY = "roomcast-schemathesis-service-key"


def binary():
    path = os.environ.get("ROOMCAST_BINARY")
    if not path:
        result = subprocess.run(["swift", "build", "--show-bin-path"], cwd=REPOSITORY, capture_output=True, text=True, timeout=300, check=True)
        path = os.path.join(result.stdout.strip().splitlines()[-1], "roomcast")
    if not os.access(path, os.X_OK):
        sys.exit(f"no roomcast binary at {path}: run `swift build` first or set ROOMCAST_BINARY")
    return path


def start_node(redis_url, log_path):
    environment = {key: value for key, value in os.environ.items() if not key.startswith("ROOMCAST_")}
    environment.update({
        "ROOMCAST_JWT_SECRET": JWT_SECRET,
        "ROOMCAST_AUTH_BCRYPT_COST": "4",
        "ROOMCAST_LOG_LEVEL": "warning",
        # The internal endpoint is on, so it is fuzzed too (its key goes with every request).
        "ROOMCAST_NOTIFICATIONS_SERVICE_KEY": SERVICE_KEY,
        # Every case comes from one address and one user: the REST rate limits (documented as
        # 429 with Retry-After, and tested by RateLimitTests) would otherwise answer most of them.
        "ROOMCAST_RATE_LOGINS_PER_ADDRESS": "1000000",
        "ROOMCAST_RATE_LOGINS_PER_ACCOUNT": "1000000",
        "ROOMCAST_RATE_REST_MUTATIONS_PER_USER": "1000000",
    })
    with open(log_path, "wb") as log:
        process = subprocess.Popen([binary(), "serve", "--port", "0", "--redis-url", redis_url], cwd=REPOSITORY, env=environment,
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        match = READY_LINE.search(tail(log_path, 200))
        if match:
            return process, int(match.group(1))
        if process.poll() is not None:
            break
        time.sleep(0.05)
    stop_process(process)
    sys.exit("roomcast did not become ready:\n" + tail(log_path))


def seed_data(base, token):
    """Gives the fuzzed user something in every list, so that list answers are checked against
    their schemas with items in them: a room made by another user (a `room_created`
    notification), an element in it with the user's heart, a push device, a notification from a
    service with an actor and data."""
    def call(method, path, bearer=None, body=None, headers=None, expected=(200, 201)):
        all_headers = dict(headers or {})
        if bearer:
            all_headers["Authorization"] = f"Bearer {bearer}"
        answer = requests.request(method, base + path, json=body, headers=all_headers, timeout=30)
        assert answer.status_code in expected, f"{method} {path}: {answer.status_code} {answer.text}"
        return answer.json()["data"]

    me = call("GET", "/api/users/me", token)
    other = call("POST", "/api/auth/register", body={"username": f"seed_{uuid.uuid4().hex[:12]}", "password": "correct-horse-battery",
                                                     "displayName": "Seed", "firstName": "Ada", "email": f"{uuid.uuid4().hex[:8]}@example.com"})
    room = call("POST", "/api/rooms", other["token"], {"otherUserId": me["id"], "name": "seeded"})
    element = call("POST", f"/api/rooms/{room['id']}/elements", other["token"],
                   {"type": "photo", "positionX": 1, "positionY": 2, "width": 3, "height": 4, "imageUrl": "https://cdn.example.com/a.png"})
    call("POST", f"/api/rooms/{room['id']}/elements/{element['id']}/reactions/toggle", token)
    call("PUT", "/api/users/me/push-token", token, {"token": "ab" * 16, "platform": "ios"})
    call("POST", "/api/internal/notifications", body={"userId": me["id"], "type": "follow", "title": "Seed followed you", "actorId": other["user"]["id"],
                                                      "roomId": room["id"], "data": {"followId": "42"}}, headers={"X-Roomcast-Service-Key": SERVICE_KEY})


def main():
    redis = RedisServer()
    log_path = os.path.join(redis.directory, "gateway.log")
    node = None
    try:
        node, port = start_node(redis.url, log_path)
        base = f"http://127.0.0.1:{port}"
        username = f"fuzz_{uuid.uuid4().hex[:12]}"
        response = requests.post(f"{base}/api/auth/register", json={"username": username, "password": "correct-horse-battery"}, timeout=30)
        response.raise_for_status()
        token = response.json()["data"]["token"]
        seed_data(base, token)
        seed = os.environ.get("SCHEMATHESIS_SEED") or str(random.SystemRandom().randrange(1, 2**31))
        print(f"schemathesis seed {seed}: SCHEMATHESIS_SEED={seed} scripts/schemathesis.sh replays this run", flush=True)
        command = [
            os.path.join(os.path.dirname(sys.executable), "schemathesis"), "--config-file", os.path.join(HERE, "schemathesis.toml"),
            "run", f"{base}/api/openapi.json",
            "-H", f"Authorization: Bearer {token}",
            "-H", f"X-Roomcast-Service-Key: {SERVICE_KEY}",
            "--seed", seed,
            "--max-examples", os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "200"),
            # Text as ASCII: the document's byte limits (maxLength of a field bounded in bytes of
            # UTF-8) are then exact, so schema-valid text is never over them. Limits in bytes
            # rather than characters have unit tests (CredentialsTests, UserProfileTests,
            # ElementFieldsTests).
            "--generation-codec", os.environ.get("SCHEMATHESIS_CODEC", "ascii"),
            "--workers", "1",
            "--request-timeout", "10",
            "--generation-database", "none",
            "--no-color",
            *sys.argv[1:],
        ]
        print("+ " + " ".join(command).replace(token, "<token>"), flush=True)
        started = time.monotonic()
        try:
            status = subprocess.run(command, cwd=tempfile.gettempdir(), timeout=float(os.environ.get("SCHEMATHESIS_TIMEOUT", "300"))).returncode
        except subprocess.TimeoutExpired:
            print("schemathesis did not finish in time: a request hung or the bounds are too wide")
            status = 1
        print(f"schemathesis (seed {seed}) finished in {time.monotonic() - started:.0f} s with exit status {status}", flush=True)
        alive = node.poll() is None
        ready = False
        if alive:
            try:
                ready = requests.get(f"{base}/readyz", timeout=10).status_code == 200
            except requests.RequestException as error:
                print(f"/readyz: {error}")
        if not (alive and ready):
            print(f"the node did not survive the run (alive: {alive}, ready: {ready}):\n" + tail(log_path, 80))
            return 1
        print("the node is alive and ready after the run")
        if status != 0:
            print("node log (tail):\n" + tail(log_path, 40))
        return status
    finally:
        stop_process(node)
        redis.destroy()


if __name__ == "__main__":
    sys.exit(main())
