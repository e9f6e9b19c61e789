#!/usr/bin/env bash
# Runs the deployment as operators run it: the image from docker/Dockerfile, both compose files
# (docker/docker-compose.yml with the TLS override docker/docker-compose.tls.yml, then
# docker/docker-compose.cluster.yml) unmodified, their secrets in an environment file as
# docker/roomcast.env.example describes (a new JWT secret and Redis password each run), no
# added capability, and the unmodified python-socketio client through nginx (tests/compose/smoke.py):
# over https:// and wss:// on :8443 with a certificate this script makes (its own CA, which the
# client trusts), plain HTTP on :8080 for the cluster file. For each file it checks that every
# gateway node runs as `roomcast` (uid not 0) with no effective capability (CapEff 0 in
# /proc/1/status), that the image's HEALTHCHECK passes (`podman healthcheck run`), that Redis
# refuses a client without the password (and not because of protected mode), then runs the
# smoke test (REST, WebSocket and polling-only sockets, room, element, reaction, chat and its
# history, a node stopped and its sockets coming back by themselves to the other) and takes the
# stack down with its volumes. On the first file it then changes the Redis password the way
# docs/operations/deployment.md says (a second ACL password, the nodes recreated with it, the
# first removed) and, recreating node 1 at another address, shows nginx sending it traffic
# again without a restart (it looks the nodes' name up again).
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
# *.resources bundles. About 5 s, and nothing when the image was built from the same binary,
# libraries, Dockerfile and config (scripts/podman-lib.sh, which scripts/kube-test.sh shares).
# Rejected: a release build (~11 min from scratch on 2 cores), and `swift build --product roomcast
# --static-swift-stdlib` on the same .build, which looks like a relink but is not: SwiftPM puts
# `-static-stdlib -resource-dir .../swift_static` into every Swift module's compile command
# (SwiftModuleBuildDescription.stdlibArguments), so it recompiles every Swift module, and the next
# `swift build --build-tests` recompiles them all again. So the image
# is the real runtime stage, user, health check and compose files, but the code in it is the
# unoptimised debug build with the shared Swift runtime (the full in-container release build with
# the static one stays what `docker build` does).
#
# Everything it starts is removed on exit, failed or not (compose down -v of both projects, then
# any container, pod, volume or network left with their compose labels); the base images stay.
# Times on a 2-core machine: docs/operations/deployment.md ("How this is tested").
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/podman-lib.sh

podman_init compose-test
# The compose files of each stack (`-f` each), and podman-compose's project names for them.
stacks=("docker/docker-compose.yml docker/docker-compose.tls.yml" "docker/docker-compose.cluster.yml")
projects=(docker roomcast-cluster)
# The secrets come from this run's environment file (as docker/.env would hold them), not from
# the shell or a docker/.env of the checkout.
unset ROOMCAST_JWT_SECRET ROOMCAST_REDIS_PASSWORD ROOMCAST_TLS_DIR
env_file="$scratch/roomcast.env"

# ---- 1. podman and friends ---------------------------------------------------------------------
podman_install
# --foreground: a signal to this script's process group reaches them (timeout makes a group of its own).
compose() { timeout --foreground 300 "$venv/bin/podman-compose" "$@"; }

# ---- cleanup, whatever happens from here on ----------------------------------------------------
# A stack goes with everything it made: compose down -v, then whatever is left under its compose
# labels, and the anonymous volumes its containers had (images with a VOLUME, such as redis's, get
# one in every container that does not mount a named volume there: redis-cluster-init here).
stack_files() {  # INDEX: -f FILE for each of the stack's files
    local file
    for file in ${stacks[$1]}; do printf -- '-f\n%s\n' "$file"; done
}
take_down() {  # INDEX into stacks/projects
    local project=${projects[$1]} anonymous files
    mapfile -t files < <(stack_files "$1")
    anonymous="$(podman ps -aq --filter "label=io.podman.compose.project=$project" \
        | xargs -r podman inspect -f '{{range .Mounts}}{{if eq .Type "volume"}}{{.Name}} {{end}}{{end}}' 2>/dev/null)"
    [ -f "$env_file" ] && timeout --foreground 120 "$venv/bin/podman-compose" --env-file "$env_file" "${files[@]}" down -v -t 10
    local status=$?
    podman ps -aq --filter "label=io.podman.compose.project=$project" | xargs -r podman rm -f -t 0
    podman pod rm -f "pod_$project" 2>/dev/null
    podman volume ls -q --filter "label=io.podman.compose.project=$project" | xargs -r podman volume rm -f
    # shellcheck disable=SC2086
    [ -z "${anonymous// /}" ] || podman volume rm -f $anonymous 2>/dev/null
    podman network ls -q --filter "label=io.podman.compose.project=$project" | xargs -r podman network rm -f
    return "$status"
}
podman_remember_external
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
    for i in "${!stacks[@]}"; do take_down "$i" >/dev/null 2>&1; done
    # Working containers of a `podman build` cut short (buildah's), if this run left any.
    podman_remove_new_external
    rm -rf "$scratch"
    step "done (exit $status)"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- 2. base images (kept between runs) --------------------------------------------------------
podman_base_images

if [ "${1:-}" = --images-only ]; then step "base images ready"; exit 0; fi

# ---- 3. the gateway image from the binary this run built ---------------------------------------
podman_gateway_image

# ---- 4. each compose file ----------------------------------------------------------------------
# A CA of this run's own, and a certificate it signed for localhost and 127.0.0.1: nginx serves
# tls.crt/tls.key (docker/docker-compose.tls.yml mounts the folder); the client trusts ca.crt.
tls_dir="$scratch/tls"
mkdir -p "$tls_dir"
(
    cd "$tls_dir"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=Roomcast compose-test CA" -keyout ca.key -out ca.crt \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout tls.key -out tls.csr
    printf '%s\n' "subjectAltName=DNS:localhost,IP:127.0.0.1" "basicConstraints=critical,CA:FALSE" \
        "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth" >tls.ext
    openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile tls.ext -out tls.crt
    chmod 644 tls.crt tls.key ca.crt
) >"$logs/tls.log" 2>&1 || { cat "$logs/tls.log"; die "making the test certificate failed"; }

write_env_file() {  # REDIS_PASSWORD
    printf '%s\n' "ROOMCAST_JWT_SECRET=$jwt_secret" "ROOMCAST_REDIS_PASSWORD=$1" "ROOMCAST_TLS_DIR=$tls_dir" >"$env_file"
}
jwt_secret="$(random_hex)"
redis_password="$(random_hex)"
write_env_file "$redis_password"

compose_stack() {  # INDEX ARGS...: podman-compose on that stack's files with the environment file
    local files
    mapfile -t files < <(stack_files "$1")
    shift
    compose --env-file "$env_file" "${files[@]}" "$@"
}

container_of() {  # PROJECT SERVICE
    podman ps -a --filter "label=io.podman.compose.project=$1" --filter "label=io.podman.compose.service=$2" \
        --format '{{.Names}}' | head -1
}

check_node() {  # CONTAINER: non-root, no capabilities, healthy
    local c=$1
    check_unprivileged "$c"
    local tries=0 out
    until out="$(podman healthcheck run "$c" 2>&1)"; do
        tries=$((tries + 1))
        [ "$tries" -lt 20 ] || die "$c: podman healthcheck run: $out"
        sleep 0.5
    done
    echo "    $c: podman healthcheck run -> ${out:-(exit 0)}, status $(podman inspect -f '{{.State.Health.Status}}' "$c")"
}

check_redis() {  # CONTAINER: refuses a client without the password, on its network address
    local c=$1 anonymous logged_in
    # Without the password redis-cli holds (REDISCLI_AUTH), from the container's own address (not
    # loopback: protected mode would refuse such a client before any password if the default user
    # had none).
    anonymous="$(podman exec "$c" env -u REDISCLI_AUTH redis-cli -h "$(ip_of "$c")" ping 2>&1)"
    [[ "$anonymous" == NOAUTH* ]] || die "$c: a client without the password got: $anonymous"
    logged_in="$(podman exec "$c" redis-cli --user roomcast --no-auth-warning -h "$(ip_of "$c")" ping 2>&1)"
    [ "$logged_in" = PONG ] || die "$c: roomcast with the password got: $logged_in"
    echo "    $c: without the password: $anonymous; as roomcast: $logged_in"
}

run_stack() {  # INDEX BASE [SMOKE ARGUMENTS...]
    local index=$1 base=$2 project=${projects[$1]} c
    shift 2
    local nodes=()
    for service in node1 node2; do
        c="$(container_of "$project" "$service")"
        [ -n "$c" ] || die "${stacks[$index]}: no $service container"
        [ "$(podman inspect -f '{{.State.Running}}' "$c")" = true ] || die "${stacks[$index]}: $c is not running"
        nodes+=("$c")
    done
    for c in "${nodes[@]}"; do
        wait_ready "http://$(ip_of "$c"):8080/readyz" 60
    done
    wait_ready "$base/readyz" 30 "$tls_dir/ca.crt"
    for c in "${nodes[@]}"; do check_node "$c"; done
    for service in redis redis1; do
        c="$(container_of "$project" "$service")"
        [ -z "$c" ] || check_redis "$c"
    done
    step "${stacks[$index]}: smoke test through nginx at $base"
    timeout --foreground 300 "$py" tests/compose/smoke.py --base "$base" --node "${nodes[0]}" --node "${nodes[1]}" "$@" \
        >"$logs/smoke-$project.log" 2>&1 || { sed 's/^/    /' "$logs/smoke-$project.log"; die "${stacks[$index]}: smoke test failed"; }
    sed 's/^/    /' "$logs/smoke-$project.log"
}

# The Redis password changed without downtime (docs/operations/deployment.md), and nginx sending
# traffic to a node recreated at another address.
rotate_and_recreate() {  # INDEX BASE
    local index=$1 base=$2 project=${projects[$1]} redis node1 node2 network old_ip new_ip placeholder answer
    local new_password
    new_password="$(random_hex)"
    redis="$(container_of "$project" redis)"
    node1="$(container_of "$project" node1)"
    node2="$(container_of "$project" node2)"
    network="$(podman inspect -f '{{range $name, $_ := .NetworkSettings.Networks}}{{$name}}{{end}}' "$node1")"
    step "${stacks[$index]}: a second Redis password, then node1 recreated with it at another address"
    answer="$(podman exec "$redis" redis-cli --user roomcast --no-auth-warning ACL SETUSER roomcast ">$new_password")"
    [ "$answer" = OK ] || die "ACL SETUSER roomcast >new: $answer"
    write_env_file "$new_password"
    old_ip="$(ip_of "$node1")"
    podman rm -f -t 20 "$node1" >/dev/null
    # Its address is taken first, so that the new container cannot get it back.
    placeholder="roomcast-compose-test-placeholder"
    podman run -d --name "$placeholder" --network "$network" --label "io.podman.compose.project=$project" \
        --ip "$old_ip" localhost/debian:bookworm sleep 600 >/dev/null || die "a placeholder at $old_ip"
    compose_stack "$index" up -d --no-build --no-deps node1 >"$logs/recreate-node1.log" 2>&1 || die "recreating node1 failed"
    node1="$(container_of "$project" node1)"
    new_ip="$(ip_of "$node1")"
    [ -n "$new_ip" ] && [ "$new_ip" != "$old_ip" ] || die "node1 is back at $new_ip, not at another address than $old_ip"
    podman rm -f -t 0 "$placeholder" >/dev/null
    wait_ready "http://$new_ip:8080/readyz" 60 >/dev/null   # it logged in to Redis with the new password
    echo "    $node1: recreated at $new_ip (was $old_ip), ready: it logged in with the new password"
    local tries
    tries="$("$py" -c 'import sys; sys.path.insert(0, "tests/compose"); import smoke; print(smoke.reach(sys.argv[1], sys.argv[2], sys.argv[3]))' \
        "$base" "http://$new_ip:8080" "$tls_dir/ca.crt")" || die "nginx sends no traffic to node1 at its new address"
    echo "    nginx, not restarted, sent a handshake to it after $tries handshake(s)"
    step "${stacks[$index]}: node2 recreated with the new password, then the old password removed"
    compose_stack "$index" up -d --no-build --no-deps --force-recreate node2 >"$logs/recreate-node2.log" 2>&1 || die "recreating node2 failed"
    node2="$(container_of "$project" node2)"
    wait_ready "http://$(ip_of "$node2"):8080/readyz" 60 >/dev/null
    answer="$(podman exec "$redis" redis-cli --user roomcast --no-auth-warning -a "$new_password" ACL SETUSER roomcast "<$redis_password" 2>&1)"
    [ "$answer" = OK ] || die "ACL SETUSER roomcast <old: $answer"
    answer="$(podman exec "$redis" env -u REDISCLI_AUTH redis-cli --no-auth-warning AUTH roomcast "$redis_password" 2>&1)"
    [[ "$answer" == WRONGPASS* ]] || die "the old password still logs in: $answer"
    for c in "$node1" "$node2"; do wait_ready "http://$(ip_of "$c"):8080/readyz" 30 >/dev/null; done
    wait_ready "$base/readyz" 30 "$tls_dir/ca.crt" >/dev/null
    echo "    the old password is refused ($answer); both nodes and nginx ready"
    redis_password="$new_password"
}

if (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null || (exec 3<>/dev/tcp/127.0.0.1/8443) 2>/dev/null; then
    die "something listens on 127.0.0.1:8080 or :8443 already (the compose files publish nginx there)"
fi

# In two steps, Redis first, then the rest without their dependencies: podman-compose makes a
# container that depends on another `--requires` it, and podman then refuses to remove node1 while
# node2 and nginx exist, which the recreation below needs.
step "${stacks[0]}: up -d redis, then up -d --no-deps node1 node2 nginx"
compose_stack 0 up -d --no-build redis >"$logs/up-docker-1.log" 2>&1 || die "${stacks[0]}: up (Redis) failed"
compose_stack 0 up -d --no-build --no-deps node1 node2 nginx >"$logs/up-docker-2.log" 2>&1 || die "${stacks[0]}: up (nodes) failed"
run_stack 0 https://127.0.0.1:8443 --ca "$tls_dir/ca.crt" --redirect-from http://127.0.0.1:8080
rotate_and_recreate 0 https://127.0.0.1:8443
step "${stacks[0]}: down -v"
take_down 0 >"$logs/down-docker.log" 2>&1 || die "${stacks[0]}: down failed"

# podman 4.3.1 cannot start node1 of this file in one `up -d` (its dependency graph chokes on the
# exited redis-cluster-init): Redis and the init job first, then the rest without their
# dependencies (they are up and the init has succeeded).
step "${stacks[1]}: up -d redis1 redis2 redis3 redis-cluster-init"
compose_stack 1 up -d --no-build redis1 redis2 redis3 redis-cluster-init >"$logs/up-cluster-1.log" 2>&1 \
    || die "${stacks[1]}: up (Redis) failed"
init="$(container_of roomcast-cluster redis-cluster-init)"
[ -n "$init" ] || die "no redis-cluster-init container"
init_status="$(timeout --foreground 120 podman wait "$init")" || die "redis-cluster-init did not end within 120 s"
[ "$init_status" = 0 ] || die "redis-cluster-init exited $init_status"
echo "    $init: exit 0, $(podman logs "$init" 2>&1 | tail -1)"
step "${stacks[1]}: up -d --no-deps node1 node2 nginx"
compose_stack 1 up -d --no-build --no-deps node1 node2 nginx >"$logs/up-cluster-2.log" 2>&1 \
    || die "${stacks[1]}: up (nodes) failed"
run_stack 1 http://127.0.0.1:8080
step "${stacks[1]}: down -v"
take_down 1 >"$logs/down-roomcast-cluster.log" 2>&1 || die "${stacks[1]}: down failed"

step "both compose files passed"
