#!/usr/bin/env bash
# Runs the deployment as operators run it: the image from docker/Dockerfile, both compose files
# (docker/docker-compose.yml, then docker/docker-compose.cluster.yml) unmodified, no override
# file, no added capability, and the unmodified python-socketio client through nginx on :8080
# (tests/compose/smoke.py). For each file it checks that every gateway node runs as `roomcast`
# (uid not 0) with no effective capability (CapEff 0 in /proc/1/status), that the image's
# HEALTHCHECK passes (`podman healthcheck run`), then runs the smoke test (REST, WebSocket and
# polling-only sockets, room, element, reaction, chat and its history, a node stopped and its
# sockets reconnecting to the other) and takes the stack down with its volumes.
#
#   scripts/compose-test.sh                 (as root; CI runs it from scripts/test.sh)
#   scripts/compose-test.sh --images-only   (podman, the virtualenv and the base images only)
#
# No Docker engine and no container registry here, so:
# - podman (Debian's 4.3.1: podman, netavark, aardvark-dns, slirp4netns, fuse-overlayfs, uidmap,
#   runc, iptables, debootstrap) is installed with apt when missing, and podman-compose 1.6.0 plus
#   the client libraries (versions from tests/e2e/requirements.txt) into .build-compose/venv;
# - tests/compose/containers.conf (ulimits this sandbox can grant, runc for its hybrid cgroups,
#   netavark) is used through CONTAINERS_CONF only if a trivial container does not run with the
#   host's own settings; /etc is never written;
# - the base images are built locally and kept for the next run: debian:bookworm(-slim) from
#   debootstrap, and stand-ins for redis:7.0-bookworm and nginx:1.25-bookworm from Debian's
#   packages (tests/compose/images/; also tagged docker.io/library/..., so the compose files
#   resolve them unmodified). A stand-in is rebuilt when its folder changes (a label holds its hash).
#
# The gateway binary is not compiled again. The image is docker/Dockerfile's `prebuilt` target
# (the same runtime stage as the default target; `--format docker` keeps its HEALTHCHECK) around
# what this script stages in .build-prebuilt/: the debug binary scripts/test.sh has just built and
# tested (.build/debug/roomcast, stripped), the Swift runtime libraries ldd finds for it in the
# toolchain (it finds them beside itself in /app: SwiftPM links with RUNPATH $ORIGIN) and its
# *.resources bundles. About 5 s. Rejected: a release build (~11 min from scratch on 2 cores), and
# `swift build --product roomcast --static-swift-stdlib` on the same .build, which looks like a
# relink but is not: SwiftPM puts `-static-stdlib -resource-dir .../swift_static` into every Swift
# module's compile command (SwiftModuleBuildDescription.stdlibArguments), so it recompiles every
# Swift module, and the next `swift build --build-tests` recompiles them all again. So the image
# is the real runtime stage, user, health check and compose files, but the code in it is the
# unoptimised debug build with the shared Swift runtime (the full in-container release build with
# the static one stays what `docker build` does).
#
# Everything it starts is removed on exit, failed or not (compose down -v of both projects, then
# any container, pod, volume or network left with their compose labels); the base images stay.
# Times on a 2-core machine: see README ("Docker").
set -euo pipefail
cd "$(dirname "$0")/.."

t0=$SECONDS
step() { printf '== compose-test [%3d s] %s\n' "$((SECONDS - t0))" "$*"; }
die() { echo "compose-test: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (rootful podman)"

work=.build-compose          # the virtualenv (ignored by git and by .dockerignore)
prebuilt=.build-prebuilt     # the staged binary: the build context of the `prebuilt` target
files=(docker/docker-compose.yml docker/docker-compose.cluster.yml)
projects=(docker roomcast-cluster)   # podman-compose's project names for those files
mkdir -p "$work"
scratch="$(mktemp -d -t roomcast-compose.XXXXXX)"
logs="$scratch/logs"
mkdir -p "$logs"

# ---- 1. podman and friends ---------------------------------------------------------------------
packages=(podman netavark aardvark-dns slirp4netns fuse-overlayfs uidmap runc iptables debootstrap python3-venv)
missing=()
for p in "${packages[@]}"; do
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    step "apt-get install ${missing[*]}"
    apt-get update -q >"$logs/apt.log" 2>&1 || { cat "$logs/apt.log"; die "apt-get update failed"; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >>"$logs/apt.log" 2>&1 \
        || { tail -40 "$logs/apt.log"; die "apt-get install failed"; }
fi

venv="$work/venv"
requirements="podman-compose==1.6.0 $(grep -E '^(python-socketio|python-engineio|websocket-client|requests)(\[|==)' tests/e2e/requirements.txt | tr '\n' ' ')"
if [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$requirements" ]; then
    step "virtualenv $venv: $requirements"
    rm -rf "$venv"
    python3 -m venv "$venv"
    # shellcheck disable=SC2086
    "$venv/bin/pip" install -q --disable-pip-version-check $requirements
    echo "$requirements" >"$venv/.requirements"
fi
py="$venv/bin/python"
# --foreground: a signal to this script's process group reaches them (timeout makes a group of its own).
compose() { timeout --foreground 300 "$venv/bin/podman-compose" "$@"; }

# ---- cleanup, whatever happens from here on ----------------------------------------------------
# A stack goes with everything it made: compose down -v, then whatever is left under its compose
# labels, and the anonymous volumes its containers had (images with a VOLUME, such as redis's, get
# one in every container that does not mount a named volume there: redis-cluster-init here).
take_down() {  # INDEX into files/projects
    local file=${files[$1]} project=${projects[$1]} anonymous
    anonymous="$(podman ps -aq --filter "label=io.podman.compose.project=$project" \
        | xargs -r podman inspect -f '{{range .Mounts}}{{if eq .Type "volume"}}{{.Name}} {{end}}{{end}}' 2>/dev/null)"
    timeout --foreground 120 "$venv/bin/podman-compose" -f "$file" down -v -t 10
    local status=$?
    podman ps -aq --filter "label=io.podman.compose.project=$project" | xargs -r podman rm -f -t 0
    podman pod rm -f "pod_$project" 2>/dev/null
    podman volume ls -q --filter "label=io.podman.compose.project=$project" | xargs -r podman volume rm -f
    # shellcheck disable=SC2086
    [ -z "${anonymous// /}" ] || podman volume rm -f $anonymous 2>/dev/null
    podman network ls -q --filter "label=io.podman.compose.project=$project" | xargs -r podman network rm -f
    return "$status"
}
external_before="$(podman ps -aq --external --no-trunc 2>/dev/null | sort || true)"
cleanup() {
    local status=$?
    set +e
    if [ "$status" -ne 0 ]; then
        echo "compose-test: FAILED (exit $status); logs of the stack's containers follow" >&2
        for p in "${projects[@]}"; do
            for c in $(podman ps -a --filter "label=io.podman.compose.project=$p" --format '{{.Names}}' 2>/dev/null); do
                echo "---- podman logs --tail 25 $c" >&2
                podman logs --tail 25 "$c" >&2 2>&1
            done
        done
        for f in "$logs"/*.log; do
            case "$f" in */smoke-*) continue ;; esac   # printed whole already
            [ -s "$f" ] && { echo "---- $f (tail)" >&2; tail -20 "$f" >&2; }
        done
    fi
    step "cleanup"
    for i in "${!files[@]}"; do take_down "$i" >/dev/null 2>&1; done
    # Working containers of a `podman build` cut short (buildah's), if this run left any.
    comm -13 <(echo "$external_before") <(podman ps -aq --external --no-trunc 2>/dev/null | sort) \
        | xargs -r podman rm -f >/dev/null 2>&1
    rm -rf "$scratch"
    step "done (exit $status)"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- 2. base images (kept between runs) --------------------------------------------------------
if ! podman image exists localhost/debian:bookworm; then
    mirror="${ROOMCAST_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
    step "debootstrap bookworm from $mirror -> localhost/debian:bookworm"
    nice debootstrap --variant=minbase bookworm "$scratch/rootfs" "$mirror" >"$logs/debootstrap.log" 2>&1 \
        || { tail -30 "$logs/debootstrap.log"; die "debootstrap failed"; }
    printf '%s\n' "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
        "deb ${mirror%/debian}/debian-security bookworm-security main" >"$scratch/rootfs/etc/apt/sources.list"
    rm -rf "$scratch"/rootfs/var/cache/apt/archives/*.deb "$scratch"/rootfs/var/lib/apt/lists/*
    tar -C "$scratch/rootfs" -c . | podman import --change 'CMD ["bash"]' - localhost/debian:bookworm >"$logs/import.log" 2>&1 \
        || { cat "$logs/import.log"; die "podman import failed"; }
    rm -rf "$scratch/rootfs"
fi
for name in localhost/debian:bookworm-slim docker.io/library/debian:bookworm docker.io/library/debian:bookworm-slim; do
    podman tag localhost/debian:bookworm "$name"
done

# The host's podman settings, unless a container cannot run with them (this sandbox: see the file).
if [ -z "${CONTAINERS_CONF:-}" ] && ! podman run --rm localhost/debian:bookworm true >"$logs/probe.log" 2>&1; then
    export CONTAINERS_CONF="$PWD/tests/compose/containers.conf"
    step "the host's podman settings cannot run a container ($(tail -1 "$logs/probe.log")): CONTAINERS_CONF=$CONTAINERS_CONF"
fi
podman run --rm localhost/debian:bookworm true || die "podman cannot run a container"

for image in redis:7.0-bookworm nginx:1.25-bookworm; do
    dir="tests/compose/images/${image%%:*}"
    hash="$(tar -C "$dir" -c --sort=name --mtime=@0 --owner=0 --group=0 . | sha256sum | cut -c1-16)"
    if [ "$(podman image inspect -f '{{index .Labels "roomcast.stand-in"}}' "localhost/$image" 2>/dev/null)" != "$hash" ]; then
        step "stand-in localhost/$image ($dir)"
        nice podman build --pull=never --label "roomcast.stand-in=$hash" -t "localhost/$image" \
            -t "docker.io/library/$image" "$dir" >"$logs/image-${image%%:*}.log" 2>&1 \
            || { tail -30 "$logs/image-${image%%:*}.log"; die "building the $image stand-in failed"; }
    fi
done

if [ "${1:-}" = --images-only ]; then step "base images ready"; exit 0; fi

# ---- 3. the gateway image from the binary this run built ---------------------------------------
# The debug binary scripts/test.sh built and tested, stripped, with the Swift runtime libraries it
# links (those ldd finds in the toolchain) beside it: SwiftPM links executables with the RUNPATH
# $ORIGIN, so in /app it finds them there. No compiler runs.
# .build/debug is what `swift build --show-bin-path` names (without waiting for SwiftPM's lock);
# ROOMCAST_BIN_DIR picks another build's folder.
bin="${ROOMCAST_BIN_DIR:-.build/debug}"
[ -x "$bin/roomcast" ] || die "no $bin/roomcast: build first (swift build --build-tests, as scripts/test.sh does)"
step "stage $bin/roomcast (debug, stripped) + its Swift runtime libraries in $prebuilt/"
rm -rf "$prebuilt" && mkdir -p "$prebuilt"
strip -o "$prebuilt/roomcast" "$bin/roomcast"
cp -R "$bin"/*.resources "$prebuilt/"
toolchain_libs="$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")/lib/swift/linux"
ldd "$bin/roomcast" | awk -v dir="$toolchain_libs/" 'index($3, dir) == 1 {print $3}' | xargs -r cp -t "$prebuilt/"
step "podman build --target prebuilt -> localhost/roomcast:latest ($(du -sh "$prebuilt" | cut -f1) staged)"
previous_image="$(podman image inspect -f '{{.Id}}' localhost/roomcast:latest 2>/dev/null || true)"
podman build --format docker --pull=never --target prebuilt -f docker/Dockerfile \
    -t localhost/roomcast:latest . >"$logs/image-roomcast.log" 2>&1 \
    || { tail -30 "$logs/image-roomcast.log"; die "building the roomcast image failed"; }
# The previous run's image (another binary) goes; the layers under it stay as the build cache.
if [ -n "$previous_image" ] && [ "$previous_image" != "$(podman image inspect -f '{{.Id}}' localhost/roomcast:latest)" ]; then
    podman rmi "$previous_image" >/dev/null 2>&1 || true
fi
podman image inspect -f '    user {{.Config.User}}, healthcheck {{.Config.Healthcheck.Test}}' localhost/roomcast:latest
# Everything the binary links resolves inside the image (the toolchain is not there).
missing_libs="$(podman run --rm --entrypoint /usr/bin/ldd localhost/roomcast:latest /app/roomcast | grep -E 'not found|/opt/' || true)"
[ -z "$missing_libs" ] || die "in the image, the binary does not find: $missing_libs"

# ---- 4. each compose file ----------------------------------------------------------------------
export ROOMCAST_JWT_SECRET
ROOMCAST_JWT_SECRET="$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')"

wait_ready() {  # URL SECONDS: until it answers 200
    "$py" -c 'import sys; sys.path.insert(0, "tests/compose"); import smoke; print(sys.argv[1], smoke.wait_ready(sys.argv[1], float(sys.argv[2])))' "$1" "$2"
}

container_of() {  # PROJECT SERVICE
    podman ps -a --filter "label=io.podman.compose.project=$1" --filter "label=io.podman.compose.service=$2" \
        --format '{{.Names}}' | head -1
}

check_node() {  # CONTAINER: non-root, no capabilities, healthy
    local c=$1 status uid user capeff
    status="$(podman exec "$c" cat /proc/1/status)"
    uid="$(awk '/^Uid:/ {print $2}' <<<"$status")"
    capeff="$(awk '/^CapEff:/ {print $2}' <<<"$status")"
    user="$(podman exec "$c" id -un)"
    [ "$uid" != 0 ] && [ "$user" = roomcast ] || die "$c: runs as uid $uid ($user), not as roomcast"
    [ "$capeff" = 0000000000000000 ] || die "$c: CapEff $capeff, not 0"
    echo "    $c: pid 1 $(podman exec "$c" cat /proc/1/comm) uid $uid ($user), CapEff $capeff, CapPrm $(awk '/^CapPrm:/ {print $2}' <<<"$status")"
    local tries=0 out
    until out="$(podman healthcheck run "$c" 2>&1)"; do
        tries=$((tries + 1))
        [ "$tries" -lt 20 ] || die "$c: podman healthcheck run: $out"
        sleep 0.5
    done
    echo "    $c: podman healthcheck run -> ${out:-(exit 0)}, status $(podman inspect -f '{{.State.Health.Status}}' "$c")"
}

run_stack() {  # INDEX
    local file=${files[$1]} project=${projects[$1]} c
    local nodes=()
    for service in node1 node2; do
        c="$(container_of "$project" "$service")"
        [ -n "$c" ] || die "$file: no $service container"
        [ "$(podman inspect -f '{{.State.Running}}' "$c")" = true ] || die "$file: $c is not running"
        nodes+=("$c")
    done
    for c in "${nodes[@]}"; do
        wait_ready "http://$(podman inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$c"):8080/readyz" 60
    done
    wait_ready http://127.0.0.1:8080/readyz 30
    for c in "${nodes[@]}"; do check_node "$c"; done
    step "$file: smoke test through nginx"
    timeout --foreground 300 "$py" tests/compose/smoke.py --base http://127.0.0.1:8080 --node "${nodes[0]}" --node "${nodes[1]}" \
        >"$logs/smoke-$project.log" 2>&1 || { sed 's/^/    /' "$logs/smoke-$project.log"; die "$file: smoke test failed"; }
    sed 's/^/    /' "$logs/smoke-$project.log"
    step "$file: down -v"
    take_down "$1" >"$logs/down-$project.log" 2>&1 || die "$file: down failed"
}

if (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null; then
    die "something listens on 127.0.0.1:8080 already (the compose files publish nginx there)"
fi

step "${files[0]}: up -d"
compose -f "${files[0]}" up -d --no-build >"$logs/up-docker.log" 2>&1 || die "${files[0]}: up failed"
run_stack 0

# podman 4.3.1 cannot start node1 of this file in one `up -d` (its dependency graph chokes on the
# exited redis-cluster-init): Redis and the init job first, then the rest without their
# dependencies (they are up and the init has succeeded).
step "${files[1]}: up -d redis1 redis2 redis3 redis-cluster-init"
compose -f "${files[1]}" up -d --no-build redis1 redis2 redis3 redis-cluster-init >"$logs/up-cluster-1.log" 2>&1 \
    || die "${files[1]}: up (Redis) failed"
init="$(container_of roomcast-cluster redis-cluster-init)"
[ -n "$init" ] || die "no redis-cluster-init container"
init_status="$(timeout --foreground 120 podman wait "$init")" || die "redis-cluster-init did not end within 120 s"
[ "$init_status" = 0 ] || die "redis-cluster-init exited $init_status"
echo "    $init: exit 0, $(podman logs "$init" 2>&1 | tail -1)"
step "${files[1]}: up -d --no-deps node1 node2 nginx"
compose -f "${files[1]}" up -d --no-build --no-deps node1 node2 nginx >"$logs/up-cluster-2.log" 2>&1 \
    || die "${files[1]}: up (nodes) failed"
run_stack 1

step "both compose files passed"
