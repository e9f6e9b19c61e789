#!/usr/bin/env bash
# Runs the Kubernetes manifests (docs/operations/kubernetes/roomcast.yaml) with `podman kube play`
# and drains a pod the way Kubernetes does: every client comes back by itself to the other pod
# and misses nothing. The image is the one scripts/compose-test.sh builds (docker/Dockerfile's
# `prebuilt` target around this checkout's debug binary; not built again when it is current),
# with the same base images and virtualenv (scripts/podman-lib.sh).
#
#   scripts/kube-test.sh          (as root; CI runs it from scripts/test.sh, after compose-test.sh)
#
# Exits 2, saying why, when podman cannot run a container on this machine at all; any other
# failure is exit 1 with the pods' logs.
#
# What runs, on a podman network of its own (roomcast-kube-test, with DNS):
# - Redis: the redis:7.0-bookworm stand-in as `redis`, with an ACL user and a password made for
#   the run (the default user off), as the compose file runs it;
# - the Secret the manifest's header creates with kubectl (redis-url, jwt-secret), as a podman
#   secret: redis://roomcast:<password>@redis:6379 and a new JWT secret;
# - the Deployment's pods, from tests/kube/render.py: the pod template as written (image
#   `roomcast:latest`, which podman finds as localhost/roomcast:latest, args, env and Secret
#   references, probes, preStop hook, resources, securityContext, terminationGracePeriodSeconds)
#   with only what podman 4.3.1 cannot do done for it: one pod a replica, each at an address of
#   its own, `status.podIP` and `$(POD_IP)` filled in with that address, and the container port
#   not published on the host (podman would publish it: two pods cannot both bind it). Each is
#   played with `podman kube play --network roomcast-kube-test --ip <address>`;
# - the Service and its endpoints, as an ingress controller sees them: nginx (the
#   nginx:1.25-bookworm stand-in with docker/nginx/roomcast.conf.template, as the compose file runs
#   it) on the Service's port, sending round robin to an upstream named as the Service that lists
#   the pods' addresses and target port; a terminating pod leaves it when its termination starts
#   (the file rewritten, nginx reloaded), as Kubernetes takes it out of the endpoints while the
#   preStop hook runs. podman 4.3.1 ignores Service and PodDisruptionBudget documents.
# Nothing is published on the host: the clients reach nginx and the pods at their addresses on
# the network.
#
# Checks: each pod's process runs as `roomcast` (not uid 0) with no effective capability and
# no_new_privs (allowPrivilegeEscalation: false), with the manifest's memory limit; then
# tests/kube/drain.py: the probes' paths answer 200 on each pod (as the kubelet; podman does not
# run readiness probes, and turns httpGet liveness probes into a `curl` health check the image
# cannot run), python-socketio clients through the Service, the pod holding the most of them
# terminated as the kubelet does (its preStop command run in the container, then `podman stop -t`
# with what is left of terminationGracePeriodSeconds, as podman 4.3.1 gives every container 10 s,
# and only then the rest of the pod: `podman pod stop` alone would take the pod's network away
# from the draining node), and every client back on the other pod with every room message, the
# ones sent during the hook and the drain included; the drained container exits 0 (not killed).
#
# Everything it starts is removed on exit, failed or not (the pods, Redis, nginx, the secret and
# the network); images stay. Times: docs/operations/deployment.md ("How this is tested").
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/podman-lib.sh

podman_init kube-test
manifest=docs/operations/kubernetes/roomcast.yaml
network=roomcast-kube-test
redis=roomcast-kube-test-redis
service=roomcast-kube-test-service
rendered="$scratch/rendered"
pods=() containers=() secret_name=""

podman_install

cleanup() {
    local status=$?
    set +e
    if [ "$status" -ne 0 ] && [ "$status" -ne 2 ]; then
        echo "kube-test: FAILED (exit $status); logs of its containers follow" >&2
        for c in ${containers[@]+"${containers[@]}"} "$service" "$redis"; do
            podman container exists "$c" 2>/dev/null || continue
            echo "---- podman logs --tail 40 $c ($(podman inspect -f '{{.State.Status}}, exit {{.State.ExitCode}}' "$c"))" >&2
            podman logs --tail 40 "$c" >&2 2>&1
        done
        for f in "$logs"/*.log; do
            case "$f" in */drain.log) continue ;; esac   # printed whole already
            [ -s "$f" ] && { echo "---- $f (tail)" >&2; tail -20 "$f" >&2; }
        done
    fi
    step "cleanup"
    for f in "$rendered"/pod-*.yaml; do
        [ -f "$f" ] && podman kube down "$f" >/dev/null 2>&1
    done
    for p in ${pods[@]+"${pods[@]}"}; do podman pod rm -f -t 0 "$p" >/dev/null 2>&1; done
    podman rm -f -t 0 "$service" "$redis" >/dev/null 2>&1
    [ -z "$secret_name" ] || podman secret rm "$secret_name" >/dev/null 2>&1
    podman network rm -f "$network" >/dev/null 2>&1
    podman_remove_new_external
    rm -rf "$scratch"
    step "done (exit $status)"
    exit "$status"
}
podman_remember_external
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- images: the base images and the gateway image, built only when missing or out of date -----
podman_base_images 2
podman_gateway_image

# ---- Redis, the Secret, the pods, the Service ---------------------------------------------------
for leftover in "$service" "$redis"; do podman rm -f -t 0 "$leftover" >/dev/null 2>&1 || true; done
podman network rm -f "$network" >/dev/null 2>&1 || true
podman network create --label roomcast.kube-test=1 "$network" >/dev/null || die "podman network create $network failed"
subnet="$(podman network inspect -f '{{range .Subnets}}{{.Subnet}}{{end}}' "$network")"
step "network $network ($subnet); Redis as \`redis\` on it"
redis_password="$(random_hex)"
podman run -d --name "$redis" --network "$network" --network-alias redis -e REDISCLI_AUTH="$redis_password" \
    localhost/redis:7.0-bookworm redis-server --bind 0.0.0.0 --save '' --appendonly no \
    --user default off resetpass -@all --user roomcast on ">$redis_password" '~*' '&*' +@all >"$logs/redis-run.log" 2>&1 \
    || { cat "$logs/redis-run.log"; die "starting Redis failed"; }

step "tests/kube/render.py: the Deployment's pods and the Secret, for podman kube play"
"$py" tests/kube/render.py --manifest "$manifest" --subnet "$subnet" --out "$rendered" \
    --literal "redis-url=redis://roomcast:$redis_password@redis:6379" --literal "jwt-secret=$(random_hex)" \
    >"$logs/render.log" 2>&1 || { cat "$logs/render.log"; die "rendering $manifest failed"; }
sed '/^#plan$/,$d; s/^/    /' "$logs/render.log"
eval "$(sed '1,/^#plan$/d' "$logs/render.log")"

# A secret of that name left by a run that was killed goes first (podman 4.3 cannot replace one).
podman secret rm "$secret_name" >/dev/null 2>&1 || true
podman secret create "$secret_name" "$secret_file" >/dev/null || die "podman secret create $secret_name failed"
rm -f "$secret_file"
redis_started=$SECONDS
until [ "$(podman exec "$redis" redis-cli --user roomcast --no-auth-warning ping 2>/dev/null)" = PONG ]; do
    [ "$(podman inspect -f '{{.State.Running}}' "$redis")" = true ] || die "Redis exited"
    [ $((SECONDS - redis_started)) -lt 60 ] || die "Redis does not answer within 60 s"
    sleep 0.2
done
for i in "${!pods[@]}"; do
    podman pod rm -f -t 0 "${pods[$i]}" >/dev/null 2>&1 || true
    step "podman kube play --network $network --ip ${ips[$i]} (${pods[$i]})"
    podman kube play --network "$network" --ip "${ips[$i]}" "$rendered/pod-$i.yaml" \
        >"$logs/play-$i.log" 2>&1 || { cat "$logs/play-$i.log"; die "podman kube play of ${pods[$i]} failed"; }
done

step "the pods: user, capabilities, no_new_privs, memory limit"
for c in "${containers[@]}"; do
    [ "$(podman inspect -f '{{.State.Running}}' "$c")" = true ] || die "$c is not running"
    check_unprivileged "$c"
    [ "$(podman exec "$c" awk '/^NoNewPrivs:/ {print $2}' /proc/1/status)" = "$no_new_privs" ] \
        || die "$c: NoNewPrivs is not $no_new_privs (1: the manifest sets allowPrivilegeEscalation: false)"
    [ "$(podman inspect -f '{{.HostConfig.Memory}}' "$c")" = "$memory_limit" ] \
        || die "$c: memory limit $(podman inspect -f '{{.HostConfig.Memory}}' "$c"), the manifest's is $memory_limit bytes"
done
echo "    NoNewPrivs $no_new_privs, memory limit $memory_limit bytes (0: none), in every pod, as the manifest says"

# Its endpoints, as an ingress controller keeps them: an nginx upstream named as the Service with
# the ready pods' addresses, which the template's `proxy_pass http://$roomcast_nodes` finds before
# asking DNS. tests/kube/drain.py takes a terminating pod out of it (and reloads nginx).
endpoints="$scratch/endpoints.conf"
{
    echo "upstream $service_name {"
    for ip in "${ips[@]}"; do echo "    server $ip:$target_port;"; done
    echo "}"
} >"$endpoints"
step "the Service $service_name: nginx on :$service_port -> upstream $service_name (${ips[*]/%/:$target_port})"
podman run -d --name "$service" --network "$network" \
    -e ROOMCAST_NGINX_PORT="$service_port" -e ROOMCAST_NODES="$service_name" -e NGINX_ENVSUBST_FILTER='^ROOMCAST_' \
    -v "$PWD/docker/nginx/roomcast.conf.template:/etc/nginx/templates/default.conf.template:ro" \
    -v "$PWD/docker/nginx/roomcast-resolver.envsh:/docker-entrypoint.d/15-roomcast-resolver.envsh:ro" \
    -v "$endpoints:/etc/nginx/conf.d/endpoints.conf:ro" \
    localhost/nginx:1.25-bookworm >"$logs/nginx-run.log" 2>&1 || { cat "$logs/nginx-run.log"; die "starting nginx failed"; }
base="http://$(ip_of "$service"):$service_port"

# ---- the drain ---------------------------------------------------------------------------------
pod_args=()
for i in "${!pods[@]}"; do pod_args+=(--pod "${pods[$i]}=${ips[$i]}"); done
step "tests/kube/drain.py through $base (terminationGracePeriodSeconds $grace)"
timeout --foreground 600 "$py" tests/kube/drain.py --manifest "$manifest" --base "$base" "${pod_args[@]}" \
    --service-container "$service" --endpoints "$endpoints" \
    >"$logs/drain.log" 2>&1 || { sed 's/^/    /' "$logs/drain.log"; die "the drain test failed"; }
sed 's/^/    /' "$logs/drain.log"
step "the manifests ran under podman kube play, and a drained pod's clients all came back"
