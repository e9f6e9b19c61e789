"""README's quick start with the compose file, as far as a machine without a container engine runs
it: the commands that fill in docker/.env make one that docker-compose.yml accepts, and the rest
name the compose file, the port nginx publishes and the binary inside a node as they are.
scripts/compose-test.sh runs the compose file itself under podman."""

import os
import re
import shutil
import subprocess
import tempfile

import yaml

from test_load_balancer import REPOSITORY

README = os.path.join(REPOSITORY, "README.md")
HEADING = "## Without Debian: the compose file"
COMPOSE = os.path.join(REPOSITORY, "docker", "docker-compose.yml")
# The secrets the compose file takes from docker/.env (compose's `${NAME:?message}`).
SECRET = re.compile(r"\$\{(ROOMCAST_[A-Z_]+):\?[^}]*\}")


def quick_start():
    """The section's text and its first sh block, as lines with continuations joined."""
    with open(README, encoding="utf-8") as handle:
        text = handle.read()
    assert HEADING in text, f"README.md has no '{HEADING}'"
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return section, block.replace("\\\n", " ").splitlines()


def test_the_env_file_commands_fill_in_every_secret_the_compose_file_takes():
    _, lines = quick_start()
    setup = [line for line in lines if not line.startswith(("docker ", "curl "))]
    assert setup and setup[0].startswith("cp docker/roomcast.env.example docker/.env"), setup
    with tempfile.TemporaryDirectory() as scratch:
        os.mkdir(os.path.join(scratch, "docker"))
        shutil.copy(os.path.join(REPOSITORY, "docker", "roomcast.env.example"), os.path.join(scratch, "docker"))
        subprocess.run(["bash", "-euo", "pipefail", "-c", "\n".join(setup)], cwd=scratch, check=True, timeout=60)
        assert sorted(os.listdir(os.path.join(scratch, "docker"))) == [".env", "roomcast.env.example"], "left a file behind"
        with open(os.path.join(scratch, "docker", ".env"), encoding="utf-8") as handle:
            values = dict(line.split("=", 1) for line in handle.read().splitlines() if line and not line.startswith("#"))
    with open(COMPOSE, encoding="utf-8") as handle:
        required = set(SECRET.findall(handle.read()))
    assert required, "docker-compose.yml takes no secrets from docker/.env any more: change this test"
    for name in required:
        # 32 random bytes as hex: usable as they are inside the nodes' redis:// URL.
        assert re.fullmatch(r"[0-9a-f]{64}", values.get(name, "")), f"{name} is not filled in: {values.get(name)!r}"


def test_the_other_commands_name_what_the_compose_file_has():
    section, lines = quick_start()
    with open(COMPOSE, encoding="utf-8") as handle:
        compose = yaml.safe_load(handle)
    published = [str(port) for port in compose["services"]["nginx"]["ports"]]
    assert any(port.startswith("8080:") for port in published), published
    up = [line for line in lines if line.startswith("docker compose")]
    assert up == ["docker compose -f docker/docker-compose.yml up --build -d"], up
    assert "curl -s localhost:8080/readyz" in "\n".join(lines)
    # `roomcast inspect` inside a node: the image's binary, in a service of the file.
    inspect = re.search(r"docker compose -f docker/docker-compose\.yml exec (\w+) (\S+) inspect", section.replace("\n", " "))
    assert inspect, "the section no longer says how to run roomcast inspect in a node"
    assert inspect.group(1) in compose["services"], inspect.group(1)
    with open(os.path.join(REPOSITORY, "docker", "Dockerfile"), encoding="utf-8") as handle:
        assert f'ENTRYPOINT ["{inspect.group(2)}"]' in handle.read(), inspect.group(2)
