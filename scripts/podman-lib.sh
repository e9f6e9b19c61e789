# Set-up shared by scripts/compose-test.sh and scripts/kube-test.sh (sourced, not run): podman
# and the Python client in a virtualenv, the local base images, and the gateway image around the
# debug binary of this checkout. Run from the repository root, as root.
#
#   podman_init NAME             step/die (prefixed NAME), t0, work (.build-compose), prebuilt
#                                (.build-prebuilt), scratch (this run's temporary folder), logs
#   podman_install               podman and friends from apt when missing; the virtualenv
#                                .build-compose/venv (podman-compose and the client libraries at
#                                tests/e2e/requirements.txt's versions) -> venv, py
#   podman_base_images [STATUS]  localhost/debian:bookworm (debootstrap) and the redis and nginx
#                                stand-ins (tests/compose/images/), kept between runs;
#                                CONTAINERS_CONF=tests/compose/containers.conf when the host's
#                                settings cannot run a container; exits STATUS (default 1) when
#                                podman does not work or cannot run a container either way
#   podman_gateway_image         localhost/roomcast:latest, docker/Dockerfile's `prebuilt` target
#                                around .build/debug/roomcast; not built again when the image was
#                                made from the same binary, libraries, Dockerfile and config
#   podman_remember_external / podman_remove_new_external
#                                buildah's working containers a `podman build` cut short left
#   ip_of CONTAINER, check_unprivileged CONTAINER, wait_ready URL SECONDS [CA], random_hex

podman_init() {  # NAME
    podman_test_name=$1
    t0=$SECONDS
    [ "$(id -u)" = 0 ] || die "run as root (rootful podman)"
    work=.build-compose          # the virtualenv (ignored by git and by .dockerignore)
    prebuilt=.build-prebuilt     # the staged binary: the build context of the `prebuilt` target
    mkdir -p "$work"
    scratch="$(mktemp -d -t "roomcast-$1.XXXXXX")"
    logs="$scratch/logs"
    mkdir -p "$logs"
}

step() { printf '== %s [%3d s] %s\n' "$podman_test_name" "$((SECONDS - t0))" "$*"; }
die() { echo "$podman_test_name: $*" >&2; exit 1; }

# ---- podman and friends, the virtualenv --------------------------------------------------------
podman_install() {
    local packages=(podman netavark aardvark-dns slirp4netns fuse-overlayfs uidmap runc iptables debootstrap python3-venv)
    local missing=() p requirements
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
    requirements="podman-compose==1.6.0 $(grep -E '^(python-socketio|python-engineio|websocket-client|requests|PyYAML)(\[|==)' tests/e2e/requirements.txt | tr '\n' ' ')"
    if [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$requirements" ]; then
        step "virtualenv $venv: $requirements"
        rm -rf "$venv"
        python3 -m venv "$venv"
        # shellcheck disable=SC2086
        "$venv/bin/pip" install -q --disable-pip-version-check $requirements
        echo "$requirements" >"$venv/.requirements"
    fi
    py="$venv/bin/python"
}

# ---- base images (kept between runs) -----------------------------------------------------------
podman_base_images() {  # [STATUS when podman cannot run a container]
    local unusable=${1:-1} mirror name image dir hash
    if ! podman info >"$logs/info.log" 2>&1; then
        cat "$logs/info.log" >&2
        echo "$podman_test_name: podman does not work on this machine (podman info failed)" >&2
        exit "$unusable"
    fi
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
    if ! podman run --rm localhost/debian:bookworm true >"$logs/probe.log" 2>&1; then
        cat "$logs/probe.log" >&2
        echo "$podman_test_name: podman cannot run a container on this machine (with CONTAINERS_CONF=${CONTAINERS_CONF:-unset})" >&2
        exit "$unusable"
    fi

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
}

# ---- the gateway image from the binary this run built ------------------------------------------
# The debug binary scripts/test.sh built and tested, stripped, with the Swift runtime libraries it
# links (those ldd finds in the toolchain) beside it: SwiftPM links executables with the RUNPATH
# $ORIGIN, so in /app it finds them there. No compiler runs.
# .build/debug is what `swift build --show-bin-path` names (without waiting for SwiftPM's lock);
# ROOMCAST_BIN_DIR picks another build's folder.
# The image carries a hash of what went into it (label roomcast.prebuilt): the binary, its
# resource bundles and libraries, the Dockerfile, .dockerignore and the config it copies. An image
# with the same hash is used as it is (the second script of a scripts/test.sh run builds nothing).
podman_gateway_image() {
    local bin="${ROOMCAST_BIN_DIR:-.build/debug}" toolchain_libs libs inputs previous_image missing_libs
    [ -x "$bin/roomcast" ] || die "no $bin/roomcast: build first (swift build --build-tests, as scripts/test.sh does)"
    toolchain_libs="$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")/lib/swift/linux"
    mapfile -t libs < <(ldd "$bin/roomcast" | awk -v dir="$toolchain_libs/" 'index($3, dir) == 1 {print $3}')
    inputs="$({
        sha256sum "$bin/roomcast" ${libs[@]+"${libs[@]}"} docker/Dockerfile .dockerignore config/roomcast.yaml
        find "$bin"/*.resources -type f -print0 | sort -z | xargs -0 sha256sum
    } | sed "s|  $bin/|  |" | sha256sum | cut -c1-16)"
    if [ "$(podman image inspect -f '{{index .Labels "roomcast.prebuilt"}}' localhost/roomcast:latest 2>/dev/null)" = "$inputs" ]; then
        step "localhost/roomcast:latest is already built from $bin/roomcast and the Dockerfile as they are ($inputs)"
    else
        step "stage $bin/roomcast (debug, stripped) + its Swift runtime libraries in $prebuilt/"
        rm -rf "$prebuilt" && mkdir -p "$prebuilt"
        strip -o "$prebuilt/roomcast" "$bin/roomcast"
        cp -R "$bin"/*.resources "$prebuilt/"
        [ ${#libs[@]} -eq 0 ] || cp -t "$prebuilt/" "${libs[@]}"
        step "podman build --target prebuilt -> localhost/roomcast:latest ($(du -sh "$prebuilt" | cut -f1) staged)"
        previous_image="$(podman image inspect -f '{{.Id}}' localhost/roomcast:latest 2>/dev/null || true)"
        podman build --format docker --pull=never --target prebuilt -f docker/Dockerfile \
            --label "roomcast.prebuilt=$inputs" -t localhost/roomcast:latest . >"$logs/image-roomcast.log" 2>&1 \
            || { tail -30 "$logs/image-roomcast.log"; die "building the roomcast image failed"; }
        # The previous run's image (another binary) goes; the layers under it stay as the build cache.
        if [ -n "$previous_image" ] && [ "$previous_image" != "$(podman image inspect -f '{{.Id}}' localhost/roomcast:latest)" ]; then
            podman rmi "$previous_image" >/dev/null 2>&1 || true
        fi
    fi
    podman image inspect -f '    user {{.Config.User}}, healthcheck {{.Config.Healthcheck.Test}}' localhost/roomcast:latest
    # Everything the binary links resolves inside the image (the toolchain is not there).
    missing_libs="$(podman run --rm --entrypoint /usr/bin/ldd localhost/roomcast:latest /app/roomcast | grep -E 'not found|/opt/' || true)"
    [ -z "$missing_libs" ] || die "in the image, the binary does not find: $missing_libs"
}

# ---- leftovers of a `podman build` cut short ---------------------------------------------------
podman_remember_external() {
    external_before="$(podman ps -aq --external --no-trunc 2>/dev/null | sort || true)"
}
podman_remove_new_external() {
    comm -13 <(echo "$external_before") <(podman ps -aq --external --no-trunc 2>/dev/null | sort) \
        | xargs -r podman rm -f >/dev/null 2>&1
}

# ---- checks --------------------------------------------------------------------------------------
random_hex() { od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; }

ip_of() {  # CONTAINER
    podman inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$1"
}

wait_ready() {  # URL SECONDS [CA]: until it answers 200
    "$py" -c 'import sys; sys.path.insert(0, "tests/compose"); import smoke; print(sys.argv[1], smoke.wait_ready(sys.argv[1], float(sys.argv[2]), sys.argv[3] or None))' "$1" "$2" "${3:-}"
}

check_unprivileged() {  # CONTAINER: its process 1 runs as roomcast (not uid 0) with no effective capability
    local c=$1 status uid user capeff
    status="$(podman exec "$c" cat /proc/1/status)"
    uid="$(awk '/^Uid:/ {print $2}' <<<"$status")"
    capeff="$(awk '/^CapEff:/ {print $2}' <<<"$status")"
    user="$(podman exec "$c" id -un)"
    [ "$uid" != 0 ] && [ "$user" = roomcast ] || die "$c: runs as uid $uid ($user), not as roomcast"
    [ "$capeff" = 0000000000000000 ] || die "$c: CapEff $capeff, not 0"
    echo "    $c: pid 1 $(podman exec "$c" cat /proc/1/comm) uid $uid ($user), CapEff $capeff, CapPrm $(awk '/^CapPrm:/ {print $2}' <<<"$status"), NoNewPrivs $(awk '/^NoNewPrivs:/ {print $2}' <<<"$status")"
}
